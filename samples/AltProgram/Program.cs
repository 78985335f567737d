// Listings 4-6 of the CSP.NET paper with DistParallel, in one command:
//
//   dotnet run --project samples/AltProgram
//
// starts a NameServer in this process and two worker pools as child programs (this program run
// again as "pool": one worker and two workers), then runs listing 6:
//
//   new DistParallel(new ICSPProcess[] { new AltReader(...), new AddIntegers(100, ...), new AddIntegers(50, ...) }).Run();
//
// The three processes are shipped, fields and code, to the two pools (most free first: two on
// the pool of two, one on the other) and talk over the named channels "plus" and "minus". The
// AltReader writes its result to "result", which this program reads.
//
//   dotnet run --project samples/AltProgram -- pool <nameServerUri> <name> <workers> <parentPid>   one pool
using System.Diagnostics;
using System.Globalization;
using CspNet.Remote;
using CspNet.Remote.NameServer;
using CspNet.Remote.Workers;

class Program
{
    const int Results = 10;

    static async Task<int> Main(string[] args)
    {
        CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;
        switch (args)
        {
            case []:
                return await RunAllAsync();
            case ["pool", string nameServer, string name, string workers, string parent]:
                return await RunPoolAsync(new Uri(nameServer), name, int.Parse(workers), int.Parse(parent));
            default:
                Console.Error.WriteLine("usage: AltProgram | AltProgram pool <nameServerUri> <name> <workers> <parentPid>");
                return 2;
        }
    }

    static async Task<int> RunAllAsync()
    {
        await using NameServerHost nameServer = await NameServerHost.StartAsync();
        Console.WriteLine($"NameServer at {nameServer.Uri}");
        var pools = new List<Process>();
        try
        {
            pools.Add(await StartPoolAsync(nameServer.Uri, "pool-one", 1));
            pools.Add(await StartPoolAsync(nameServer.Uri, "pool-two", 2));

            await CspManager.InitAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = "AltProgram" });
            AltingChannelIn<int> result = Factory.GetOne2OneIn<int>("result");

            // Listing 6.
            var stopwatch = Stopwatch.StartNew();
            var run = new DistParallel(new ICSPProcess[] { new AltReader("result"),
                new AddIntegers(100, Results, "plus"), new AddIntegers(50, Results, "minus") });
            Task running = run.RunAsync();
            int total = await result.ReadAsync();
            await running;

            int expected = Results * (4950 - 1225);
            Console.WriteLine($"result {total} (expected {expected}); {run.RanRemotely} processes ran on the pools, {run.RanLocally} locally; {stopwatch.ElapsedMilliseconds} ms");
            return total == expected && run.RanRemotely == 3 ? 0 : 1;
        }
        finally
        {
            await CspManager.ShutdownAsync();
            foreach (Process pool in pools)
            {
                pool.Kill(entireProcessTree: true);
                await pool.WaitForExitAsync();
                pool.Dispose();
            }
        }
    }

    /// <summary>Starts this program again as a pool and waits until it has registered.</summary>
    static async Task<Process> StartPoolAsync(Uri nameServer, string name, int workers)
    {
        var start = new ProcessStartInfo(Environment.ProcessPath!) { RedirectStandardOutput = true, UseShellExecute = false };
        if (Path.GetFileNameWithoutExtension(Environment.ProcessPath) == "dotnet")
            start.ArgumentList.Add(typeof(Program).Assembly.Location);
        foreach (string argument in new[] { "pool", nameServer.ToString(), name, workers.ToString(), Environment.ProcessId.ToString() })
            start.ArgumentList.Add(argument);

        Process pool = Process.Start(start)!;
        while (await pool.StandardOutput.ReadLineAsync() is string line)
        {
            Console.WriteLine($"  [{name}] {line}");
            if (line.StartsWith("ready", StringComparison.Ordinal))
            {
                // Echo the rest of the pool's output (the AltReader prints there).
                _ = Task.Run(async () =>
                {
                    while (await pool.StandardOutput.ReadLineAsync() is string more)
                        Console.WriteLine($"  [{name}] {more}");
                });
                return pool;
            }
        }

        throw new InvalidOperationException($"The pool {name} ended before it was ready.");
    }

    /// <summary>A worker pool: registers at the NameServer and runs what DistParallel sends until its parent ends.</summary>
    static async Task<int> RunPoolAsync(Uri nameServer, string name, int workers, int parentId)
    {
        using Process parent = Process.GetProcessById(parentId);
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(new WorkerPoolOptions { NameServer = nameServer, Name = name, Workers = workers });
        Console.WriteLine($"ready: pool {name} with {workers} workers at {pool.Uri}");
        await parent.WaitForExitAsync();
        return 0;
    }
}
