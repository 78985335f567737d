using System.Diagnostics;
using CspNet.NameServer;
using CspNet.Remote;
using CspNet.Remote.Collectives;

/// <summary>
/// The two distributed Monte Carlo Pi farms of paper 001 (section 4.3): a farmer in one program and
/// worker programs, the job cut into packets.
/// </summary>
/// <remarks>
/// <para>
/// <b>Request-respond with alternation</b>: each worker has a named One2One request channel to the
/// farmer (hosted by the farmer) and a work channel from it (hosted by the worker). A worker sends
/// the hits of its last packet (-1 at first) as its request; the farmer selects over all request
/// channels fairly (<see cref="Alternative.FairSelectAsync(CancellationToken)"/>), adds the hits,
/// and answers the chosen worker with the next packet, or with -1 once every packet is out.
/// </para>
/// <para>
/// <b>Scatter-gather</b>: the farmer deals the packets on a named scatter (the first free worker
/// takes each) and collects the hits, in packet order, from a named gather.
/// </para>
/// <para>
/// The worker "programs" are nodes in this process, each with its own endpoint and links to the
/// farmer's, as separate programs have; benchmarks/CspNet.PaperTables runs the same farms with
/// workers as separate OS processes and measures them against the paper's table.
/// </para>
/// </remarks>
sealed class Paper001 : IDisposable
{
    private readonly NameServerHost nameServer;
    private readonly CspNode farmer;
    private readonly CspNode[] workers;
    private readonly WorkItem[] packets;
    private readonly AltingChannelIn<long>[] requests;
    private readonly AltingChannelOut<long>[] work;
    private readonly ScatterWriter<long> scatter;
    private readonly GatherReader<long> gather;
    private readonly Task serving;

    private Paper001(NameServerHost nameServer, CspNode farmer, CspNode[] workers, WorkItem[] packets,
        AltingChannelIn<long>[] requests, AltingChannelOut<long>[] work, ScatterWriter<long> scatter, GatherReader<long> gather, Task serving)
    {
        this.nameServer = nameServer;
        this.farmer = farmer;
        this.workers = workers;
        this.packets = packets;
        this.requests = requests;
        this.work = work;
        this.scatter = scatter;
        this.gather = gather;
        this.serving = serving;
    }

    /// <summary>Starts a NameServer, the farmer's node and <paramref name="workerCount"/> worker nodes, with both farms' channels.</summary>
    public static async Task<Paper001> StartAsync(PiJob job, int packetCount, int workerCount)
    {
        NameServerHost nameServer = await NameServerHost.StartAsync(new NameServerHostOptions { Port = 0 });
        Console.WriteLine($"NameServer at {nameServer.Uri}; a farmer and {workerCount} worker nodes, {packetCount} packets per run");
        CspNode Node(string label) => CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = label }).GetAwaiter().GetResult();
        CspNode farmer = Node("farmer");
        CspNode[] workers = [.. Enumerable.Range(0, workerCount).Select(i => Node($"worker-{i}"))];
        WorkItem[] packets = job.Split(packetCount);

        var requests = new AltingChannelIn<long>[workerCount];
        var work = new AltingChannelOut<long>[workerCount];
        var serving = new List<Task>();
        ScatterWriter<long> scatter = await NamedScatter.CreateAsync<long>(farmer, "mcpi-sg/work");
        GatherReader<long> gather = await NamedGather.CreateAsync<long>(farmer, "mcpi-sg/hits");
        for (int i = 0; i < workerCount; i++)
        {
            requests[i] = await farmer.GetOne2OneInAsync<long>($"mcpi-rr/request/{i}");
            AltingChannelIn<long> workIn = await workers[i].GetOne2OneInAsync<long>($"mcpi-rr/work/{i}");
            AltingChannelOut<long> request = await workers[i].GetOne2OneOutAsync<long>($"mcpi-rr/request/{i}");
            work[i] = await farmer.GetOne2OneOutAsync<long>($"mcpi-rr/work/{i}");
            serving.Add(ServeRequestRespondAsync(request, workIn, packets));

            AltingChannelIn<Indexed<long>> dealt = await NamedScatter.JoinAsync<long>(workers[i], "mcpi-sg/work");
            AltingChannelOut<Indexed<long>> hits = await NamedGather.JoinAsync<long>(workers[i], "mcpi-sg/hits");
            serving.Add(ServeScatterGatherAsync(dealt, hits, packets));
        }

        return new Paper001(nameServer, farmer, workers, packets, requests, work, scatter, gather, Task.WhenAll(serving));
    }

    /// <summary>A request-respond worker: asks with the hits of its last packet (-1: none), computes the packet it is given; -1 ends a run.</summary>
    static Task ServeRequestRespondAsync(AltingChannelOut<long> request, AltingChannelIn<long> workIn, WorkItem[] packets) => Task.Run(async () =>
    {
        long hits = -1;
        while (true)
        {
            await request.WriteAsync(hits);
            long packet = await workIn.ReadAsync();
            hits = packet < 0 ? -1 : MonteCarlo.CountInside(packets[packet]);
        }
    });

    /// <summary>A scatter-gather worker: takes the next packet dealt, answers its hits under the packet's index.</summary>
    static Task ServeScatterGatherAsync(AltingChannelIn<Indexed<long>> dealt, AltingChannelOut<Indexed<long>> hits, WorkItem[] packets) => Task.Run(async () =>
    {
        while (true)
        {
            Indexed<long> packet = await dealt.ReadAsync();
            await hits.WriteAsync(new Indexed<long>(packet.Index, MonteCarlo.CountInside(packets[packet.Value])));
        }
    });

    /// <summary>One request-respond run: the farmer selects over the workers' requests until every packet is counted and every worker told the run is over.</summary>
    public (PiEstimate, TimeSpan) RunRequestRespond(PiJob job) => Wait(async () =>
    {
        var alt = new Alternative(requests);
        // A released worker asks again at once (for the next run): its request must not be chosen
        // in this run, or it would count as released twice while another still holds a packet.
        bool[] working = [.. requests.Select(_ => true)];
        long inside = 0;
        int next = 0;
        int released = 0;
        while (released < requests.Length)
        {
            int chosen = await alt.FairSelectAsync(working);
            long hits = await requests[chosen].ReadAsync();
            if (hits >= 0)
            {
                inside += hits;
            }

            if (next < packets.Length)
            {
                await work[chosen].WriteAsync(next++);
            }
            else
            {
                await work[chosen].WriteAsync(-1);
                working[chosen] = false;
                released++;
            }
        }

        return job.Merge(inside);
    });

    /// <summary>One scatter-gather run: every packet dealt, the hits gathered in packet order.</summary>
    public (PiEstimate, TimeSpan) RunScatterGather(PiJob job) => Wait(async () =>
    {
        long first = scatter.Written;
        Task dealing = Task.Run(async () =>
        {
            for (long p = 0; p < packets.Length; p++)
            {
                await scatter.WriteAsync(p);
            }
        });
        long[] hits = await gather.GatherAsync(first, packets.Length);
        await dealing;
        return job.Merge(hits.Sum());
    });

    static (PiEstimate, TimeSpan) Wait(Func<Task<PiEstimate>> run)
    {
        var stopwatch = Stopwatch.StartNew();
        PiEstimate estimate = run().GetAwaiter().GetResult();
        return (estimate, stopwatch.Elapsed);
    }

    public void Dispose()
    {
        // The workers wait for the farmer: leaving ends their loops (their ends fail), which is expected here.
        foreach (CspNode worker in workers)
        {
            worker.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }

        farmer.DisposeAsync().AsTask().GetAwaiter().GetResult();
        serving.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing).GetAwaiter().GetResult();

        nameServer.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }
}
