// Listings 4 and 5 of the CSP.NET paper across three programs on this machine:
//
//   writer program "plus"  : AddIntegers(100) --plus (One2One)--+
//                                                               +--> AltReader (this program)
//   writer program "minus" : AddIntegers(50)  --minus (One2One)-+
//
// This program hosts the NameServer, joins it, starts the two writer programs (itself, run again
// with writer arguments) and reads until neither channel has had anything for one second.
//
//   dotnet run --project samples/PlusMinus                                   everything at once
//   dotnet run --project samples/PlusMinus -- reader <nameServerUri>          the reader only
//   dotnet run --project samples/PlusMinus -- writer plus 100 <nameServerUri> a writer only
using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using CspNet.NameServer;
using CspNet.Remote;

class Program
{
    const int Results = 10;            // each writer writes this many sums, then exits
    const int PlusNumber = 100;        // plus writes 1 + ... + 99 = 4950
    const int MinusNumber = 50;        // minus writes 1 + ... + 49 = 1225
    static readonly TimeSpan StartUpLimit = TimeSpan.FromSeconds(30);

    static Task<int> Main(string[] args)
    {
        var root = new RootCommand("Listings 4 and 5 of the CSP.NET paper across three programs: a NameServer and the reader here, two writer programs.");
        root.SetAction(_ => Cli.Report(RunAllAsync));

        Argument<Uri> readerUri = Cli.UriArgument("nameServerUri", "The NameServer to join.");
        var reader = new Command("reader", "The reader only, reading from writers started elsewhere.") { readerUri };
        reader.SetAction(result => Cli.Report(() => RunReaderAsync(result.GetRequiredValue(readerUri), writers: null)));

        // The writer programs that RunReaderAsync starts: this program again, with these arguments.
        var channel = new Argument<string>("channel") { Description = "The named channel to write to." };
        var number = new Argument<int>("number") { Description = "AddIntegers' number: each sum is 1 + ... + number - 1." };
        Argument<Uri> writerUri = Cli.UriArgument("nameServerUri", "The NameServer to join.");
        var parent = new Argument<int?>("parentPid") { Description = "Exit when this process does.", Arity = ArgumentArity.ZeroOrOne };
        var writer = new Command("writer", "A writer only.") { channel, number, writerUri, parent };
        writer.SetAction(result => Cli.Report(() => Task.FromResult(RunWriter(result.GetRequiredValue(channel), result.GetValue(number),
            result.GetRequiredValue(writerUri), result.GetValue(parent)))));

        root.Subcommands.Add(reader);
        root.Subcommands.Add(writer);
        return Cli.RunAsync(root, args);
    }

    /// <summary>The NameServer in this process, the reader here and the two writers as child programs.</summary>
    static async Task<int> RunAllAsync()
    {
        await using NameServerHost nameServer = await NameServerHost.StartAsync(new NameServerHostOptions { Port = 0 });
        Console.WriteLine($"NameServer at {nameServer.Uri}");
        using var writers = new ChildPrograms();
        return await RunReaderAsync(nameServer.Uri, writers);
    }

    /// <summary>Joins the NameServer, starts the writers if given, reads (listing 5) and checks what was read.</summary>
    static async Task<int> RunReaderAsync(Uri nameServer, ChildPrograms? writers)
    {
        await CspManager.InitAsync(new CspNodeOptions { NameServer = nameServer, ProgramLabel = "reader" });
        try
        {
            writers?.Start("plus", "writer", "plus", PlusNumber.ToString(CultureInfo.InvariantCulture), nameServer.ToString());
            writers?.Start("minus", "writer", "minus", MinusNumber.ToString(CultureInfo.InvariantCulture), nameServer.ToString());
            Stopwatch sinceStart = Stopwatch.StartNew();
            var reader = new AltReader(writersStarting: () => sinceStart.Elapsed < StartUpLimit && writers?.AnyFailed != true);
            await new Parallel(reader).RunAsync();
            bool writersOk = writers is null || await writers.WaitAsync(TimeSpan.FromSeconds(10));

            Console.WriteLine($"read {reader.FromPlus} from plus, {reader.FromMinus} from minus; total {reader.Result}");
            bool complete = writers is null
                ? reader.FromPlus > 0 && reader.FromMinus > 0
                : reader.FromPlus == Results && reader.FromMinus == Results && reader.Result == Results * (Sum(PlusNumber) - Sum(MinusNumber));
            return writersOk && complete ? 0 : 1;
        }
        finally
        {
            await CspManager.ShutdownAsync();
        }
    }

    /// <summary>A writer program: joins the NameServer and runs one AddIntegers process.</summary>
    static int RunWriter(string channel, int number, Uri nameServer, int? parentId)
    {
        if (parentId is int id)
            ChildPrograms.ExitWithParent(id);

        CspManager.Init(new CspNodeOptions { NameServer = nameServer, ProgramLabel = $"writer {channel}" });
        try
        {
            new AddIntegers(number, Results, channel).Run();
        }
        finally
        {
            CspManager.Shutdown();
        }

        Console.WriteLine($"wrote {Results} sums to {channel}");
        return 0;
    }

    static int Sum(int number) => number * (number - 1) / 2;
}
