using System.Diagnostics;
using System.Globalization;
using CspNet.Remote;
using CspNet.Remote.Collectives;
using static CspNet.PaperTables.Harness;

namespace CspNet.PaperTables.Distributed;

/// <summary>
/// The networking papers' measurements (papers 001-003 in the shared papers folder), with every
/// party a separate OS program on this machine (127.0.0.1) joined through a NameServer: ping-pong
/// latency, send-receive and point-to-point throughput by size, broadcast, request-respond vs
/// scatter-gather Monte Carlo pi under stress, a Mandelbrot farm, and the token ring.
/// </summary>
internal static class DistributedTables
{
    internal static readonly string[] Names = ["d-ping", "d-size", "d-bcast", "d-pi", "d-mandel", "d-ring"];

    /// <summary>Runs the distributed tables <paramref name="options"/> selects.</summary>
    internal static async Task RunAsync(Options options)
    {
        Console.WriteLine();
        Console.WriteLine("Distributed tables: every party a separate OS program on 127.0.0.1 (loopback, not a 100 Mbit/s LAN as in the papers),");
        Console.WriteLine("named channels of CspNet.Remote found through a NameServer; raw TCP = length-prefixed messages, NoDelay, 4 MiB socket buffers, reused buffers.");
        double rtt = 0;
        if (options.Runs("d-ping") || options.Runs("d-size") || options.Runs("d-pi"))
        {
            rtt = await PingPongAsync(options);
        }

        if (options.Runs("d-bcast"))
        {
            await BroadcastAsync(options);
        }

        if (options.Runs("d-pi"))
        {
            await MonteCarloPiAsync(options, rtt);
        }

        if (options.Runs("d-mandel"))
        {
            await MandelbrotAsync(options);
        }

        if (options.Runs("d-ring"))
        {
            await TokenRingAsync(options);
        }
    }

    private static void Section(string title, string note)
    {
        Console.WriteLine();
        Console.WriteLine(title);
        foreach (string line in note.Split('\n'))
        {
            Console.WriteLine("  " + line.TrimEnd());
        }

        Console.WriteLine($"  Load average before: {LoadAverage()}");
    }

    /// <summary>The median over <paramref name="reps"/> timed runs of <paramref name="count"/> operations (after a warm-up of the same), in µs per operation.</summary>
    private static async Task<double> MeasureAsync(Func<Task> operation, int count, int reps)
    {
        var warm = Stopwatch.StartNew();
        do
        {
            await operation();
        }
        while (warm.Elapsed < WarmupTime * 3);

        var samples = new double[reps];
        for (int r = 0; r < reps; r++)
        {
            long start = Stopwatch.GetTimestamp();
            for (int i = 0; i < count; i++)
            {
                await operation();
            }

            samples[r] = Stopwatch.GetElapsedTime(start).TotalMicroseconds / count;
        }

        return new Stats(samples).Median;
    }

    private static string Size(int bytes) => bytes switch
    {
        >= 1 << 20 => (bytes >> 20).ToString(Culture) + " MB",
        >= 1 << 10 => (bytes >> 10).ToString(Culture) + " KB",
        _ => bytes.ToString(Culture) + " B",
    };

    private static string Mbit(double bytesPerMicrosecond) => N(bytesPerMicrosecond * 8, 0);

    // ---- Ping-pong (paper 001, 4.1 and Figure 4; paper 002, "Ping Times", "Send-Receive") ------

    /// <summary>Runs the ping-pong tables; returns the 16-byte sync round trip in µs (the communication cost of one request-respond packet).</summary>
    private static async Task<double> PingPongAsync(Options options)
    {
        await using Cluster cluster = await Cluster.StartAsync("papers-ping");
        CspNode node = cluster.Node;
        AltingChannelIn<byte[]> syncBack = await node.GetOne2OneInAsync<byte[]>("pp/sync/pong");
        AltingChannelIn<byte[]> bufferedBack = await node.GetOne2OneInAsync("pp/buffered/pong", new FifoBuffer<byte[]>(4));
        string tcpAddress = (await cluster.StartAsync(["pong"]))[0];
        AltingChannelOut<byte[]> sync = await node.GetOne2OneOutAsync<byte[]>("pp/sync/ping");
        AltingChannelOut<byte[]> buffered = await node.GetOne2OneOutAsync<byte[]>("pp/buffered/ping");
        await using RawTcpLink tcp = await RawTcpLink.ConnectAsync(tcpAddress);

        Func<Task>[] RoundTrips(byte[] value) =>
        [
            async () =>
            {
                await tcp.SendAsync(value);
                _ = await tcp.ReceiveAsync();
            },
            async () =>
            {
                await sync.WriteAsync(value);
                _ = await syncBack.ReadAsync();
            },
            async () =>
            {
                await buffered.WriteAsync(value);
                _ = await bufferedBack.ReadAsync();
            },
        ];

        int reps = options.Reps;
        int count = options.Quick ? 200 : 2_000;
        double[] latency = new double[3];
        if (options.Runs("d-ping") || options.Runs("d-pi"))
        {
            Section(
                "Paper 001 Figure 2 / paper 002 \"Ping Times\": ping-pong latency of a 16-byte message (half the round trip)",
                $"Median of {reps} runs of {count:N0} round trips after warm-up. Paper 001: network 0.375 ms, MPI 0.375 ms, async CSP 0.375 ms, sync CSP 0.4 ms\n"
                + "(CSP for .NET 2.0 on 100 Mbit/s switched Ethernet). Sync = an unbuffered named One2One each way (each write waits for the reader);\n"
                + "async = a buffered one each way (FifoBuffer of 4: a write completes when the home's buffer has it).");
            Func<Task>[] trips = RoundTrips(new byte[16]);
            for (int t = 0; t < trips.Length; t++)
            {
                latency[t] = await MeasureAsync(trips[t], count, reps);
            }

            PrintTable(
                ["", "paper 001 (ms)", "CspNet (µs)", "x raw TCP"],
                [
                    ["network / raw TCP", "0.375", N(latency[0] / 2, 1), "1.00"],
                    ["async CSP / buffered named", "0.375", N(latency[2] / 2, 1), N(latency[2] / latency[0], 2)],
                    ["sync CSP / unbuffered named", "0.4", N(latency[1] / 2, 1), N(latency[1] / latency[0], 2)],
                ]);
            Program.Chart(options, dir => DistributedCharts.WritePing(dir, latency[0] / 2, latency[2] / 2, latency[1] / 2));
        }

        if (options.Runs("d-size"))
        {
            int[] sizes = options.Quick ? [1 << 10, 64 << 10] : [1 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20];
            Section(
                "Paper 001 Figure 4 / paper 002 \"Send-Receive Throughput\": ping-pong with a message of each size, Mbit/s both ways",
                $"Median of {reps} runs after warm-up; Mbit/s = 2 x size x 8 / round trip. The papers show charts only: on their 100 Mbit/s network every\n"
                + "framework approached 100 Mbit/s above ~20,000 bytes, sync CSP catching up with async and MPI there.");
            var rows = new List<string[]>();
            var chartRows = new List<(int, double, double, double)>();
            foreach (int size in sizes)
            {
                byte[] value = new byte[size];
                Random.Shared.NextBytes(value);
                int trips = Math.Max(20, (options.Quick ? 2_000_000 : 64_000_000) / size);
                double[] micros = new double[3];
                Func<Task>[] operations = RoundTrips(value);
                for (int t = 0; t < operations.Length; t++)
                {
                    micros[t] = await MeasureAsync(operations[t], Math.Min(trips, 2_000), reps);
                }

                rows.Add([Size(size), Mbit(2.0 * size / micros[0]), Mbit(2.0 * size / micros[2]), Mbit(2.0 * size / micros[1]),
                    N(micros[0] / micros[2], 2), N(micros[0] / micros[1], 2)]);
                chartRows.Add((size, 16.0 * size / micros[0], 16.0 * size / micros[2], 16.0 * size / micros[1]));
            }

            PrintTable(["message", "raw TCP", "buffered named", "unbuffered named", "buffered / TCP", "unbuffered / TCP"], rows);
            Program.Chart(options, dir => DistributedCharts.WriteSizes(dir, chartRows));
        }

        return latency[1];
    }

    // ---- Broadcast and point-to-point (paper 001, 4.2, Figures 3 and 5) -----------------------

    private static async Task BroadcastAsync(Options options)
    {
        const int Readers = 4;
        await using Cluster cluster = await Cluster.StartAsync("papers-broadcast");
        CspNode node = cluster.Node;
        await using BroadcastWriter<byte[]> toOne = await NamedBroadcast.CreateAsync<byte[]>(node, "bc/one");
        await using BroadcastWriter<byte[]> toAll = await NamedBroadcast.CreateAsync<byte[]>(node, "bc/all");
        string[] addresses = await cluster.StartAsync([.. Enumerable.Range(0, Readers).Select(i => new[] { "sink", i.ToString(CultureInfo.InvariantCulture) })]);
        await toOne.WaitForReadersAsync(1);
        await toAll.WaitForReadersAsync(Readers);
        var links = new RawTcpLink[Readers];
        for (int i = 0; i < Readers; i++)
        {
            links[i] = await RawTcpLink.ConnectAsync(addresses[i]);
        }

        try
        {
            int reps = options.Reps;
            int[] sizes = options.Quick ? [1 << 10, 64 << 10] : [1 << 10, 64 << 10, 1 << 20];
            Section(
                $"Paper 001 Figures 3 and 5: point-to-point (1 reader program) and broadcast (to {Readers} reader programs) throughput, Mbit/s of data delivered",
                $"Median of {reps} runs after warm-up. Named: a NamedBroadcast (CspNet.Remote.Collectives), each value written to every enrolled reader's\n"
                + "unbuffered named One2One at once (a write completes when every reader has the value). Raw TCP: the same bytes on one connection per reader,\n"
                + "the last message of a burst acknowledged.\n"
                + $"Paper 001 (charts only, 100 Mbit/s network, broadcast to 8 machines): async CSP and MPI near the network, sync CSP lower for small messages;\n"
                + "for broadcast MPI reached up to ~4x the link (aggregated), CPA networking stayed below the network's 100 Mbit/s.");
            var rows = new List<string[]>();
            var chartRows = new List<(string, double, double)>();
            foreach (int readers in new[] { 1, Readers })
            {
                foreach (int size in sizes)
                {
                    byte[] value = new byte[size], last = new byte[size];
                    last[0] = 1;
                    const int Burst = 16;

                    // About 64 MB per timed run (quick: 4 MB), at least 2 bursts.
                    int bursts = (int)Math.Clamp((options.Quick ? 4L << 20 : 64L << 20) / ((long)readers * size * Burst), 2, 2_000 / Burst);
                    double named = await MeasureAsync(
                        async () =>
                        {
                            for (int b = 0; b < Burst; b++)
                            {
                                await (readers == 1 ? toOne : toAll).WriteAsync(value);
                            }
                        },
                        bursts,
                        reps);
                    double tcp = await MeasureAsync(
                        async () =>
                        {
                            for (int b = 0; b < Burst; b++)
                            {
                                await Task.WhenAll(links.Take(readers).Select(l => l.SendAsync(b == Burst - 1 ? last : value).AsTask()));
                            }

                            await Task.WhenAll(links.Take(readers).Select(l => l.ReceiveAsync().AsTask()));
                        },
                        bursts,
                        reps);
                    double bytes = (double)readers * size * Burst;
                    rows.Add([readers == 1 ? "point-to-point" : $"broadcast to {readers}", Size(size), Mbit(bytes / tcp), Mbit(bytes / named), N(tcp / named, 2)]);
                    chartRows.Add(((readers == 1 ? "1:1 " : $"1:{readers} ") + Size(size), bytes * 8 / tcp, bytes * 8 / named));
                }
            }

            PrintTable(["", "message", "raw TCP", "named", "named / TCP"], rows);
            Program.Chart(options, dir => DistributedCharts.WriteBroadcast(dir, chartRows));
        }
        finally
        {
            foreach (RawTcpLink link in links)
            {
                await link.DisposeAsync();
            }
        }
    }

    // ---- Monte Carlo pi under stress (paper 001, 4.3, Table 1, Figures 6 and 7) ----------------

    private static readonly Dictionary<long, (double Optimal, double SubOptimal)> s_paperPi = new()
    {
        [1_000] = (119523, 775773),
        [10_000] = (35148, 100773),
        [100_000] = (26711, 33273),
        [1_000_000] = (25867, 26523),
        [10_000_000] = (25782, 25848),
    };

    private static async Task MonteCarloPiAsync(Options options, double roundTripMicros)
    {
        int workers = Math.Max(2, Environment.ProcessorCount);
        long total = options.Quick ? 4_000_000 : options.Full ? 1_000_000_000 : 200_000_000;
        long[] perPacket = options.Quick ? [10_000, 100_000, 1_000_000] : options.Full ? [1_000, 10_000, 100_000, 1_000_000, 10_000_000] : [10_000, 100_000, 1_000_000, 10_000_000];

        // The computation rate of one worker, measured here as paper 001 measured its machines'.
        var rate = Stopwatch.StartNew();
        long sampled = 0;
        do
        {
            _ = Workloads.PiHits(1_000_000, (ulong)sampled + 1);
            sampled += 1_000_000;
        }
        while (rate.Elapsed < TimeSpan.FromMilliseconds(300));
        double perSecond = sampled / rate.Elapsed.TotalSeconds;
        double computeMs = total / perSecond / workers * 1000;

        Section(
            $"Paper 001 Table 1 and Figures 6-7: Monte Carlo pi over {workers} worker programs, {N(total)} iterations, request-respond vs scatter-gather",
            $"One worker computes {N(perSecond / 1e6, 1)} million iterations/s here (paper: 4.85 million); the sync 16-byte round trip measured above is {N(roundTripMicros, 1)} µs (paper: 0.75 ms).\n"
            + "Optimal = computation + communication / workers, sub-optimal = computation + communication (paper 001, 4.3.1), with computation = iterations / rate / workers\n"
            + "and communication = packets x round trip. Request-respond: the farmer alternates (FairSelect) over one request channel per worker; scatter-gather:\n"
            + "each round deals one packet per worker through a NamedScatter and gathers the round's results through a NamedGather. The paper's columns are for 1e9 iterations over 8 workers.");
        var rows = new List<string[]>();
        var chartRows = new List<(long, double, double, double, double, double, double)>();
        foreach (long iterations in perPacket)
        {
            long packets = total / iterations;
            double communicationMs = packets * roundTripMicros / 1000;
            double requestRespond = await TimePiAsync(workers, "pi-rr", total, iterations);
            double scatterGather = await TimePiAsync(workers, "pi-sg", total, iterations);
            (double paperOptimal, double paperSub) = s_paperPi.TryGetValue(iterations, out var paper) ? paper : (double.NaN, double.NaN);
            rows.Add([
                N(iterations), N(packets), Ms(communicationMs), Ms(computeMs),
                Ms(computeMs + (communicationMs / workers)), Ms(computeMs + communicationMs),
                Ms(requestRespond), Ms(scatterGather),
                double.IsNaN(paperOptimal) ? "-" : N(paperOptimal), double.IsNaN(paperSub) ? "-" : N(paperSub),
            ]);
            chartRows.Add((iterations, computeMs + (communicationMs / workers), computeMs + communicationMs, requestRespond, scatterGather, paperOptimal, paperSub));
        }

        PrintTable(["iterations/packet", "packets", "comm. ms", "comp. ms", "optimal ms", "sub-optimal ms", "request-respond ms", "scatter-gather ms", "paper optimal", "paper sub-opt."], rows);
        Program.Chart(options, dir => DistributedCharts.WritePi(dir, chartRows));
    }

    /// <summary>One farm run: starts the workers, farms <paramref name="total"/> iterations in packets, returns the milliseconds from the first packet to the last result.</summary>
    private static async Task<double> TimePiAsync(int workers, string mode, long total, long perPacket)
    {
        if (mode == "pi-sg")
        {
            return await TimeScatterGatherPiAsync(workers, total, perPacket);
        }

        await using Cluster cluster = await Cluster.StartAsync("papers-" + mode);
        CspNode node = cluster.Node;
        var inputs = new AltingChannelIn<long>[workers];
        const string InputName = "/request/";
        for (int w = 0; w < workers; w++)
        {
            inputs[w] = await node.GetOne2OneInAsync<long>(mode + InputName + w.ToString(CultureInfo.InvariantCulture));
        }

        await cluster.StartAsync([.. Enumerable.Range(0, workers).Select(w => new[] { mode, w.ToString(CultureInfo.InvariantCulture) })]);
        var work = new IChannelOut<long>[workers];
        for (int w = 0; w < workers; w++)
        {
            work[w] = await node.GetOne2OneOutAsync<long>(mode + "/work/" + w.ToString(CultureInfo.InvariantCulture));
        }

        long packets = total / perPacket, hits = 0;
        var time = Stopwatch.StartNew();
        if (mode == "pi-rr")
        {
            var alt = new Alternative(inputs);
            long sent = 0;
            int stopped = 0;
            while (stopped < workers)
            {
                int w = await alt.FairSelectAsync();
                long result = await inputs[w].ReadAsync();
                hits += Math.Max(0, result);
                if (sent < packets)
                {
                    await work[w].WriteAsync(perPacket);
                    sent++;
                }
                else
                {
                    await work[w].WriteAsync(0);
                    stopped++;
                }
            }
        }

        Check(hits, packets * perPacket);
        return time.Elapsed.TotalMilliseconds;
    }

    /// <summary>
    /// The scatter-gather farm: each round deals one packet per worker through the named scatter
    /// (each to the first free worker) and gathers the round's results, by index, through the named gather.
    /// </summary>
    private static async Task<double> TimeScatterGatherPiAsync(int workers, long total, long perPacket)
    {
        await using Cluster cluster = await Cluster.StartAsync("papers-pi-sg");
        CspNode node = cluster.Node;
        ScatterWriter<long> scatter = await NamedScatter.CreateAsync<long>(node, "pi-sg/work");
        GatherReader<long> gather = await NamedGather.CreateAsync<long>(node, "pi-sg/result");
        await cluster.StartAsync([.. Enumerable.Range(0, workers).Select(w => new[] { "pi-sg", w.ToString(CultureInfo.InvariantCulture) })]);

        long packets = total / perPacket, hits = 0;
        var time = Stopwatch.StartNew();
        for (long sent = 0; sent < packets; sent += workers)
        {
            int round = (int)Math.Min(workers, packets - sent);
            for (int w = 0; w < round; w++)
            {
                await scatter.WriteAsync(perPacket);
            }

            hits += (await gather.GatherAsync(sent, round)).Sum();
        }

        double elapsed = time.Elapsed.TotalMilliseconds;
        for (int w = 0; w < workers; w++)
        {
            await scatter.WriteAsync(0);
        }

        Check(hits, packets * perPacket);
        return elapsed;
    }

    private static void Check(long hits, long iterations)
    {
        double pi = 4.0 * hits / iterations;
        if (Math.Abs(pi - Math.PI) > 0.01)
        {
            throw new InvalidOperationException($"The farm estimated pi as {pi}: a packet was lost or counted twice.");
        }
    }

    // ---- Mandelbrot (paper 002, "Mandelbrot" and its throughput table) -------------------------

    private static readonly (double DataPointsPerSecond, double BytesPerSecond)[] s_paperMandelbrot =
    [
        (3.25e5, 1.3e5), (6.67e5, 2.66e6), (8.04e5, 3.21e6), (8.04e5, 3.22e6), (8.46e5, 3.38e6), (8.65e5, 3.46e6), (8.69e5, 3.47e6), (8.71e5, 3.48e6),
    ];

    private static async Task MandelbrotAsync(Options options)
    {
        int workers = Math.Max(2, Environment.ProcessorCount);
        (int width, int height) = options.Quick ? (350, 200) : (3500, 2000);
        int[] scales = options.Quick ? [1] : options.Full ? [1, 2, 3, 4] : [1, 2];
        Section(
            $"Paper 002 Mandelbrot: a {width} x {height} image per part, scale s = s x s parts, rows farmed to {workers} worker programs",
            "Escape time up to 255; 4 bytes per data point (DP) as the paper counts them. The farmer alternates (FairSelect) over one result channel per\n"
            + "worker and answers each result with the next row. Paper 002 (JCSP / CSP for .NET 2.0, 100 Mbit/s network, Core Duo workers).");
        var rows = new List<string[]>();
        var chartRows = new List<(int, double, double)>();
        foreach (int scale in scales)
        {
            int w = width * scale, h = height * scale;
            await using Cluster cluster = await Cluster.StartAsync("papers-mandelbrot");
            CspNode node = cluster.Node;
            var results = new AltingChannelIn<byte[]>[workers];
            for (int i = 0; i < workers; i++)
            {
                results[i] = await node.GetOne2OneInAsync<byte[]>("mb/result/" + i.ToString(CultureInfo.InvariantCulture));
            }

            await cluster.StartAsync([.. Enumerable.Range(0, workers).Select(i => new[] { "mandel", i.ToString(CultureInfo.InvariantCulture) })]);
            var jobs = new IChannelOut<byte[]>[workers];
            for (int i = 0; i < workers; i++)
            {
                jobs[i] = await node.GetOne2OneOutAsync<byte[]>("mb/job/" + i.ToString(CultureInfo.InvariantCulture));
            }

            var alt = new Alternative(results);
            long bytes = 0;
            int next = 0, stopped = 0;
            var time = Stopwatch.StartNew();
            while (stopped < workers)
            {
                int i = await alt.FairSelectAsync();
                bytes += (await results[i].ReadAsync()).Length;
                await jobs[i].WriteAsync(Workloads.MandelbrotJob(next < h ? next : -1, w, h));
                if (next < h)
                {
                    next++;
                }
                else
                {
                    stopped++;
                }
            }

            double seconds = time.Elapsed.TotalSeconds;
            long points = (long)w * h;
            if (bytes != 4 * points)
            {
                throw new InvalidOperationException($"The farm returned {bytes} bytes for {points} data points: a row was lost or returned twice.");
            }

            (double paperDps, double paperBps) = s_paperMandelbrot[scale - 1];
            rows.Add([scale.ToString(Culture), points.ToString("0.00e0", Culture), N(seconds, 2), (points / seconds).ToString("0.00e0", Culture), (bytes / seconds).ToString("0.00e0", Culture),
                paperDps.ToString("0.00e0", Culture), paperBps.ToString("0.00e0", Culture)]);
            chartRows.Add((scale, points / seconds, paperDps));
        }

        PrintTable(["scale", "data points", "s", "DP/s", "bytes/s", "paper DP/s", "paper bytes/s"], rows);
        Program.Chart(options, dir => DistributedCharts.WriteMandelbrot(dir, chartRows));
    }

    // ---- Token ring (paper 003, Figure 2) -------------------------------------------------------

    private static async Task TokenRingAsync(Options options)
    {
        int[] sizes = options.Quick ? [2, 4] : [2, 4, 8];
        int reps = options.Reps;
        Section(
            "Paper 003 Figure 2: the PyCSP token ring, one token passed around N programs over unbuffered named One2One channels",
            $"Median of {reps} runs after warm-up; messages/s = hops per second. Paper 003 (chart only): PyCSP's network channels on a cluster.");
        var rows = new List<string[]>();
        var chartRows = new List<(int, double)>();
        foreach (int members in sizes)
        {
            await using Cluster cluster = await Cluster.StartAsync("papers-ring-0");
            CspNode node = cluster.Node;
            AltingChannelIn<int> input = await node.GetOne2OneInAsync<int>("ring/0");
            await cluster.StartAsync([.. Enumerable.Range(1, members - 1).Select(i => new[] { "ring", i.ToString(CultureInfo.InvariantCulture), members.ToString(CultureInfo.InvariantCulture) })]);
            AltingChannelOut<int> output = await node.GetOne2OneOutAsync<int>("ring/1");
            int laps = options.Quick ? 50 : 500;
            double lapMicros = await MeasureAsync(
                async () =>
                {
                    await output.WriteAsync(1);
                    _ = await input.ReadAsync();
                },
                laps,
                reps);
            rows.Add([members.ToString(Culture), N(lapMicros, 0), N(members * 1e6 / lapMicros, 0), N(lapMicros / members, 1)]);
            chartRows.Add((members, members * 1e6 / lapMicros));
        }

        PrintTable(["programs", "µs per lap", "messages/s", "µs per hop"], rows);
        Program.Chart(options, dir => DistributedCharts.WriteRing(dir, chartRows));
    }
}
