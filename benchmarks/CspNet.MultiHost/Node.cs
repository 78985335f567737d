using System.Diagnostics;
using System.Globalization;
using CspNet.Remote;
using CspNet.Remote.Workers;

namespace CspNet.MultiHost;

/// <summary>
/// One program of the scale run, on a host of the rig: it answers the harness's commands on its
/// input (register, resolve, pool, pools, traffic, recover, soak, quit), each with one line of figures.
/// </summary>
internal static class Node
{
    internal static async Task<int> RunAsync(CspNodeOptions options, Uri? replica, int index, int programs, int names, int values, TimeSpan peerTimeout)
    {
        var steps = new StepClock(options.LoggerFactory);
        options.LoggerFactory = steps;
        options.ProgramLabel = $"scale-{index}";
        // On a machine far beyond its cores (other builds running) a freshly started program and
        // NameServer get a few percent of a core each, and a program's first calls (TLS, and the
        // gRPC stack compiled on first use on both sides) miss the 5 s call deadline again and
        // again; the run measures what comes after the start, so the start may take this long.
        options.NameServerTimeout = TimeSpan.FromMinutes(3);

        // Many programs setting up links at once on a few cores take longer than the default 5 s
        // (100 programs on 2 cores: over 30 s for some TLS and link set-ups).
        options.PeerTimeout = peerTimeout;
        if (replica is not null)
        {
            options.NameServerReplicas.Add(replica);
        }

        await using CspNode node = await CspNode.StartAsync(options);
        Console.WriteLine("ready");
        var inputs = new List<AltingChannelIn<int>>();
        var outputs = new List<IChannelOut<int>>();
        WorkerPoolHost? pool = null;
        using var lookup = new PoolLookup(options.NameServer, options.Certificate!, options.TrustedCertificate!, options.ClusterKey!);
        while (await Console.In.ReadLineAsync() is { } command)
        {
            string[] words = command.Split(' ');
            switch (words[0])
            {
                case "register":
                    Console.WriteLine("registered " + await TimeEachAsync(names, async k => inputs.Add(await node.GetOne2OneInAsync<int>($"n{index}.{k}"))));
                    break;
                case "resolve":
                    Console.WriteLine("resolved " + await TimeEachAsync(names, async k => outputs.Add(await node.GetOne2OneOutAsync<int>($"n{(index + 1) % programs}.{k}"))));
                    break;
                case "pool":
                    {
                        // A worker pool of this program's own (the WorkerPool service), registered under its name.
                        long start = Stopwatch.GetTimestamp();
                        pool = await WorkerPoolHost.StartAsync(new WorkerPoolOptions
                        {
                            Name = words[1],
                            Address = options.Address,
                            NameServer = options.NameServer,
                            Workers = 1,
                            Certificate = options.Certificate,
                            ClientCertificateAuthority = options.TrustedCertificate,
                            TrustedCertificate = options.TrustedCertificate,
                            ClusterKey = options.ClusterKey,
                            PeerTimeout = options.PeerTimeout,
                        });
                        Console.WriteLine($"pooled {Stopwatch.GetElapsedTime(start).TotalMicroseconds:0}");
                        break;
                    }

                case "pools":
                    {
                        // DistParallel's look-up of free pools, repeated: each must list every pool.
                        int expected = int.Parse(words[2], CultureInfo.InvariantCulture);
                        var micros = new List<string>();
                        for (int k = 0; k < int.Parse(words[1], CultureInfo.InvariantCulture); k++)
                        {
                            long start = Stopwatch.GetTimestamp();
                            int listed = (await lookup.ListAsync()).Count;
                            micros.Add(Stopwatch.GetElapsedTime(start).TotalMicroseconds.ToString("0", CultureInfo.InvariantCulture));
                            if (listed != expected)
                            {
                                Console.WriteLine($"failed listed {listed} pools where {expected} are registered");
                            }
                        }

                        Console.WriteLine("listed " + string.Join(',', micros));
                        break;
                    }

                case "traffic":
                    Console.WriteLine("traffic " + await TrafficAsync(inputs, outputs, values, TimeSpan.Zero));
                    break;
                case "soak":
                    Console.WriteLine("soak " + await TrafficAsync(inputs, outputs, int.MaxValue, TimeSpan.FromSeconds(double.Parse(words[1], CultureInfo.InvariantCulture))));
                    break;
                case "recover":
                    {
                        // The harness has just killed the NameServer in use: how long until this
                        // program can register a name again (through the replica).
                        // The steps' times say what the wait was made of (failover, new lease and
                        // every name again, or just the call).
                        long start = Stopwatch.GetTimestamp();
                        int threads = ThreadPool.ThreadCount;
                        long queued = ThreadPool.PendingWorkItemCount;
                        await node.GetOne2OneInAsync<int>($"r{index}.{words[1]}");
                        Console.WriteLine($"recovered {Stopwatch.GetElapsedTime(start).TotalMilliseconds:0.0} {steps.Since(start)} thread-pool threads {threads} -> {ThreadPool.ThreadCount}, queued at the start {queued}");
                        break;
                    }

                case "quit":
                    if (pool is not null)
                    {
                        await pool.DisposeAsync();
                    }

                    return 0;
            }
        }

        if (pool is not null)
        {
            await pool.DisposeAsync();
        }

        return 0;
    }

    /// <summary>Runs <paramref name="step"/> for 0..count-1 in turn; the latencies in microseconds, comma-separated.</summary>
    private static async Task<string> TimeEachAsync(int count, Func<int, Task> step)
    {
        var micros = new string[count];
        for (int k = 0; k < count; k++)
        {
            long start = Stopwatch.GetTimestamp();
            await step(k);
            micros[k] = Stopwatch.GetElapsedTime(start).TotalMicroseconds.ToString("0", CultureInfo.InvariantCulture);
        }

        return string.Join(',', micros);
    }

    /// <summary>
    /// Writes 0, 1, 2... on every output and reads every input, each checking that it gets the
    /// next value (nothing lost, duplicated or reordered), for <paramref name="count"/> values or
    /// until <paramref name="duration"/> has passed; "ok VALUES_READ MS RSS_MB VALUES_WRITTEN" or "failed ...".
    /// </summary>
    private static async Task<string> TrafficAsync(List<AltingChannelIn<int>> inputs, List<IChannelOut<int>> outputs, int count, TimeSpan duration)
    {
        long start = Stopwatch.GetTimestamp();
        bool Done(int i) => i >= count || (duration > TimeSpan.Zero && Stopwatch.GetElapsedTime(start) >= duration);
        long moved = 0, written = 0;
        string? error = null;

        // A writer sends -1 when it stops, so its reader knows where the sequence ends.
        IEnumerable<Task> writers = outputs.Select(output => Task.Run(async () =>
        {
            for (int i = 0; !Done(i); i++)
            {
                await output.WriteAsync(i);
                Interlocked.Increment(ref written);
            }

            await output.WriteAsync(-1);
        }));
        IEnumerable<Task> readers = inputs.Select(input => Task.Run(async () =>
        {
            for (int expected = 0; ; expected++)
            {
                int value = await input.ReadAsync();
                if (value == -1)
                {
                    return;
                }

                if (value != expected)
                {
                    error = $"value {value} where {expected} was next";
                }

                Interlocked.Increment(ref moved);
            }
        }));
        await Task.WhenAll(writers.Concat(readers));
        long rss = Environment.WorkingSet >> 20;
        return error is null
            ? $"ok {moved} {Stopwatch.GetElapsedTime(start).TotalMilliseconds:0} {rss} {written}"
            : "failed " + error;
    }
}
