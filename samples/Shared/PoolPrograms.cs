using System.CommandLine;
using System.Globalization;
using CspNet.Remote.Workers;

/// <summary>
/// Worker pools as child programs of a sample: the sample's own executable run again with
/// <c>pool &lt;nameServerUri&gt; &lt;name&gt; &lt;workers&gt;</c>, hosting a <see cref="WorkerPoolHost"/>.
/// </summary>
/// <remarks>Shared by the samples (linked into each project), not part of the library.</remarks>
static class PoolPrograms
{
    /// <summary>How long a pool program may take to start and register.</summary>
    public static readonly TimeSpan StartLimit = TimeSpan.FromSeconds(60);

    /// <summary>Starts <paramref name="count"/> pools named pool-a, pool-b, ... and returns when all have registered.</summary>
    public static async Task StartAsync(ChildPrograms children, Uri nameServer, int count, int workersPerPool)
    {
        var ready = new List<Task>();
        for (int i = 0; i < count; i++)
        {
            string name = "pool-" + (char)('a' + i);
            ready.Add(children.WhenPrintedAsync(name, "ready", StartLimit));
            children.Start(name, "pool", nameServer.ToString(), name, workersPerPool.ToString(CultureInfo.InvariantCulture));
        }

        await Task.WhenAll(ready);
    }

    /// <summary>
    /// The hidden command <c>pool &lt;nameServerUri&gt; &lt;name&gt; &lt;workers&gt; [&lt;parentPid&gt;]</c>
    /// that <see cref="StartAsync"/> starts; it runs <see cref="RunAsync"/>.
    /// </summary>
    public static Command Command()
    {
        Argument<Uri> nameServer = Cli.UriArgument("nameServerUri", "The NameServer to register at.");
        var name = new Argument<string>("name") { Description = "The pool's name." };
        var workers = new Argument<int>("workers") { Description = "Workers in the pool." };
        var parent = new Argument<int?>("parentPid") { Description = "Exit when this process does.", Arity = ArgumentArity.ZeroOrOne };
        var command = new Command("pool", "Run as a worker pool program (started by this program itself).") { nameServer, name, workers, parent };
        command.Hidden = true;
        command.SetAction(result => Cli.Report(() => RunAsync(result.GetRequiredValue(nameServer), result.GetRequiredValue(name), result.GetValue(workers), result.GetValue(parent))));
        return command;
    }

    /// <summary>
    /// The pool program: registers a pool of <paramref name="workers"/> workers at the NameServer,
    /// prints "ready", and serves until the main program ends (or Ctrl+C).
    /// </summary>
    public static async Task<int> RunAsync(Uri nameServer, string name, int workers, int? parentId)
    {
        if (parentId is int id)
            ChildPrograms.ExitWithParent(id);

        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(new WorkerPoolOptions { NameServer = nameServer, Name = name, Workers = workers });
        var stop = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Console.CancelKeyPress += (_, e) => { e.Cancel = true; stop.TrySetResult(); };
        Console.WriteLine("ready");
        await stop.Task;
        return 0;
    }
}
