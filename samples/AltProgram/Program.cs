// Listings 4, 5 and 6 of the CSP.NET paper: DistParallel ships an AltReader and two AddIntegers
// processes to worker pools, where they talk over the named channels "plus" and "minus".
//
//   this program: NameServer, DistParallel(AltReader, AddIntegers(100, "plus"), AddIntegers(100, "minus"))
//   pool-a, pool-b: worker pools (this program, run again as a pool), 2 workers each
//
// The three processes land on the two pools (pool-a takes two, pool-b one), so "plus" and "minus"
// cross programs. The pools have none of this program's code of their own: what runs there is
// the code DistParallel shipped (docs/SHIPPING.md).
//
//   dotnet run --project samples/AltProgram                          everything at once
//   dotnet run --project samples/AltProgram -- standalone            no pools: DistParallel runs all three here
//   dotnet run --project samples/AltProgram -- pool <nameServerUri> <name> <workers>   a pool only
using System.CommandLine;
using CspNet.NameServer;
using CspNet.Remote;

class AltProgram
{
    const int WorkersPerPool = 2;

    static Task<int> Main(string[] args)
    {
        var root = new RootCommand("Listings 4, 5 and 6 of the CSP.NET paper: DistParallel ships an AltReader and two AddIntegers processes to two worker pool programs it starts.");
        root.SetAction(_ => Cli.Report(RunAllAsync));
        var standalone = new Command("standalone", "No pools: DistParallel runs all three processes here, on local threads.");
        standalone.SetAction(_ => Cli.Report(() => Task.FromResult(RunStandAlone())));
        root.Subcommands.Add(standalone);
        root.Subcommands.Add(PoolPrograms.Command()); // the hidden pool programs that RunAllAsync starts
        return Cli.RunAsync(root, args);
    }

    /// <summary>The NameServer here, two pools as child programs, and listing 6.</summary>
    static async Task<int> RunAllAsync()
    {
        await using NameServerHost nameServer = await NameServerHost.StartAsync(new NameServerHostOptions { Port = 0 });
        Console.WriteLine($"NameServer at {nameServer.Uri}");
        using var pools = new ChildPrograms();
        await PoolPrograms.StartAsync(pools, nameServer.Uri, count: 2, WorkersPerPool);

        await CspManager.InitAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = "AltProgram" });
        try
        {
            // Listing 6, as printed (with the paper's "minus" channel name for the second writer).
            var distParallel = new DistParallel(new ICSPProcess[] { new AltReader(),
                                                                    new AddIntegers(100, "plus"),
                                                                    new AddIntegers(100, "minus") });
            await distParallel.RunAsync();
            Console.WriteLine($"DistParallel ran {distParallel.RanRemotely} processes on worker pools and {distParallel.RanLocally} here");
            return distParallel.RanRemotely == 3 ? 0 : 1;
        }
        finally
        {
            await CspManager.ShutdownAsync();
        }
    }

    /// <summary>Section 2.3's transparency: without pools, the same listing runs on local threads.</summary>
    static int RunStandAlone()
    {
        CspManager.InitStandAlone();
        try
        {
            var distParallel = new DistParallel(new ICSPProcess[] { new AltReader(),
                                                                    new AddIntegers(100, "plus"),
                                                                    new AddIntegers(100, "minus") });
            distParallel.Run();
            Console.WriteLine($"DistParallel ran {distParallel.RanRemotely} processes on worker pools and {distParallel.RanLocally} here");
            return distParallel.RanLocally == 3 ? 0 : 1;
        }
        finally
        {
            CspManager.Shutdown();
        }
    }
}
