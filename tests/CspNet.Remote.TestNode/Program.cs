// Child program of the distributed tests: joins the NameServer given first, runs one scenario,
// prints "ready" once its ends are attached and "done ..." when it finishes. Exit code 0 = the
// scenario ended as the test expects; anything unexpected is printed and ends with exit code 1.
using CspNet.Remote;
using CspNet.Remote.Collectives;

if (args.Length < 2)
{
    Console.Error.WriteLine("usage: CspNet.Remote.TestNode <nameServerUri> <scenario> [arguments]");
    return 2;
}

if (args[1] is "paper-writer" or "paper-reader")
{
    // Listings 4 and 5 of the CSP.NET paper, one per program, with CspManager.Init on this
    // machine's NameServer port (listing 3): Main returns without CspManager.Shutdown().
    var nameServer = new Uri(args[0]);
    string nameServerPort = nameServer.Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
    if (Environment.GetEnvironmentVariable("CSPNET_TEST_ADDRESS") is { } ip)
    {
        // On a host of its own: listing 6's Init, this host's and the NameServer's addresses; the
        // cluster key and certificates come from the environment (CSPNET_CLUSTER_KEY, CSPNET_CERTIFICATE_FILE...).
        CspManager.Init("0", nameServerPort, ip, nameServer.Host);
    }
    else
    {
        CspManager.Init("0", nameServerPort);
    }

    if (args[1] == "paper-writer")
    {
        // paper-writer <channel> <number>: says it is there (below), runs listing 4, returns.
        Factory.GetAny2OneOut<string>("writers").Write(args[2]);
        new AddIntegers(int.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture), args[2]).Run();
        Console.WriteLine("done wrote 100");
    }
    else
    {
        // paper-reader: waits for both writers first (listing 5's one-second timeout would fire
        // before a writer program had started), runs listing 5, returns.
        AltingChannelIn<string> writers = Factory.GetAny2OneIn<string>("writers");
        Console.WriteLine($"ready {writers.Read()} {writers.Read()}");
        var reader = new AltReader();
        reader.Run();
        Console.WriteLine($"done result {reader.Result}");
    }

    return 0;
}

if (args[1] == "stranger")
{
    // stranger <homePort> <statusPage> <pool> <name>: another user's attempts, each refused or not.
    return await CspNet.Remote.TestNode.Stranger.RunAsync(new Uri(args[0]), int.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture), new Uri(args[3]), new Uri(args[4]), args[5]);
}

// On a host of the multi-host rig the test says where to bind, the cluster key (never on a
// command line), the certificate files (the variables CspManager.Init reads) and the
// NameServer's replicas through the environment.
var options = new CspNodeOptions
{
    NameServer = new Uri(args[0]),
    PeerTimeout = TimeSpan.FromSeconds(3),
    ProgramLabel = $"testnode-{args[1]}-{Environment.ProcessId}",
    Address = Environment.GetEnvironmentVariable("CSPNET_TEST_ADDRESS") ?? "127.0.0.1",
    ClusterKey = Environment.GetEnvironmentVariable("CSPNET_CLUSTER_KEY"),

    // As the test run it serves: CSPNET_BULK_LANE=off runs every remote test with the lane off.
    BulkLane = !string.Equals(Environment.GetEnvironmentVariable("CSPNET_BULK_LANE"), "off", StringComparison.OrdinalIgnoreCase),
};
if (Environment.GetEnvironmentVariable("CSPNET_CERTIFICATE_FILE") is { } certificate)
{
    options.Certificate = System.Security.Cryptography.X509Certificates.X509Certificate2.CreateFromPemFile(certificate, Environment.GetEnvironmentVariable("CSPNET_CERTIFICATE_KEY_FILE"));
    options.TrustedCertificate = System.Security.Cryptography.X509Certificates.X509CertificateLoader.LoadCertificateFromFile(Environment.GetEnvironmentVariable("CSPNET_TRUSTED_CERTIFICATE_FILE")!);

    if (args[1] == "dist-parallel")
    {
        // Worker pools of the rig serve mutual TLS with the same authority.
        options.WorkerPoolTrustedCertificate = options.TrustedCertificate;
        options.WorkerPoolClientCertificate = options.Certificate;
    }
}

foreach (string replica in (Environment.GetEnvironmentVariable("CSPNET_TEST_NAMESERVER_REPLICAS") ?? string.Empty).Split(',', StringSplitOptions.RemoveEmptyEntries))
{
    options.NameServerReplicas.Add(new Uri(replica));
}

if (args[^1] == "lane-off")
{
    // A scenario's last argument "lane-off": this program's values travel on the link only.
    options.BulkLane = false;
}

if (args[1] == "write-big-seq")
{
    // Each value in many small chunks on the link, so that a freeze lands while one is in transfer.
    options.ChunkSize = 16 << 10;
    options.BulkLane = false;
}

await using CspNode node = await CspNode.StartAsync(options);

string[] a = args[2..];
try
{
    switch (args[1])
    {
        case "write":
            {
                // write <kind> <name> <count>: writes 0..count-1.
                AltingChannelOut<int> output = await Scenarios.OutAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    await output.WriteAsync(i);
                }

                Console.WriteLine($"done wrote {count}");
                return 0;
            }

        case "write-bytes":
            {
                // write-bytes <name> <bytes> <count>: writes count values of <bytes> bytes to a
                // One2One, value i starting with i and filled with (byte)i; says how its lane travels.
                AltingChannelOut<byte[]> output = await node.GetOne2OneOutAsync<byte[]>(a[0]);
                Console.WriteLine("ready");
                int size = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    byte[] value = new byte[size];
                    Array.Fill(value, (byte)i);
                    BitConverter.TryWriteBytes(value, i);
                    await output.WriteAsync(value);
                }

                string lane = ((CspNet.Remote.Internal.Client.RemoteChannelOut<byte[]>)output).Link.LaneKind?.ToString() ?? "none";
                Console.WriteLine($"done wrote {count} lane {lane}");
                return 0;
            }

        case "read-bytes":
            {
                // read-bytes <name> <bytes> <count> [buffer]: reads count values written by write-bytes
                // (through a FIFO buffer of that many values if given), each checked whole and in order.
                AltingChannelIn<byte[]> input = a.Length > 3
                    ? await node.GetOne2OneInAsync(a[0], new FifoBuffer<byte[]>(int.Parse(a[3], System.Globalization.CultureInfo.InvariantCulture)))
                    : await node.GetOne2OneInAsync<byte[]>(a[0]);
                Console.WriteLine("ready");
                int size = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    byte[] value = await input.ReadAsync();
                    if (value.Length != size || BitConverter.ToInt32(value) != i || value[^1] != (byte)i)
                    {
                        Console.WriteLine($"failed value {i}: {value.Length} bytes starting with {(value.Length >= 4 ? BitConverter.ToInt32(value) : -1)}");
                        return 1;
                    }
                }

                Console.WriteLine($"done read {count}");
                return 0;
            }

        case "write-blocking":
            {
                // write-blocking <kind> <name> <count>: the same from a thread process (blocking API).
                AltingChannelOut<int> output = await Scenarios.OutAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                new CspNet.Parallel([new Writer(output, count)]).Run();
                Console.WriteLine($"done wrote {count}");
                return 0;
            }

        case "read":
            {
                // read <kind> <name> <count>: reads count values and prints their sum.
                AltingChannelIn<int> input = await Scenarios.InAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                long sum = 0;
                for (int i = 0; i < count; i++)
                {
                    sum += await input.ReadAsync();
                }

                Console.WriteLine($"done sum {sum}");
                return 0;
            }

        case "read-blocking":
            {
                // read-blocking <kind> <name> <count>: the same from a thread process (blocking API).
                AltingChannelIn<int> input = await Scenarios.InAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                var reader = new Reader(input, int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture));
                new CspNet.Parallel([reader]).Run();
                Console.WriteLine($"done sum {reader.Sum}");
                return 0;
            }

        case "read-until-poison":
            {
                AltingChannelIn<int> input = await Scenarios.InAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                long count = 0;
                try
                {
                    while (true)
                    {
                        await input.ReadAsync();
                        count++;
                    }
                }
                catch (PoisonException)
                {
                    Console.WriteLine($"done poisoned after {count}");
                    return 0;
                }
            }

        case "write-seq":
            {
                // write-seq <kind> <name>: writes 0, 1, 2, ... until a write fails; says how many completed.
                AltingChannelOut<int> output = await Scenarios.OutAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                int written = 0;
                try
                {
                    while (true)
                    {
                        await output.WriteAsync(written);
                        written++;
                    }
                }
                catch (Exception e) when (e is PeerLostException or PoisonException)
                {
                    Console.WriteLine($"done wrote {written} {e.GetType().Name}");
                    return 0;
                }
            }

        case "offer-seq":
            {
                // offer-seq <kind> <name>: offers 0, 1, 2, ... in an alternation beside a 5 ms timer
                // (a timeout offers the same value again) until a selection fails; says how many were written.
                AltingChannelOut<int> output = await Scenarios.OutAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                var timer = new CSTimer();
                var alternative = new Alternative([output, timer]);
                int written = 0;
                try
                {
                    while (true)
                    {
                        output.Offer(written);
                        timer.RelativeTimeOut(5);
                        if (await alternative.PriSelectAsync() == 0)
                        {
                            written++;
                        }
                    }
                }
                catch (Exception e) when (e is PeerLostException or PoisonException)
                {
                    Console.WriteLine($"done wrote {written} {e.GetType().Name}");
                    return 0;
                }
            }

        case "write-big-seq":
            {
                // write-big-seq <name> <bytes>: writes values of <bytes> bytes to a One2One, the first
                // four the value's number 0, 1, 2, ..., until a write fails; says how many completed.
                AltingChannelOut<byte[]> output = await node.GetOne2OneOutAsync<byte[]>(a[0]);
                int size = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                Console.WriteLine("ready");
                int written = 0;
                try
                {
                    while (true)
                    {
                        byte[] value = new byte[size];
                        BitConverter.TryWriteBytes(value, written);
                        await output.WriteAsync(value);
                        written++;
                    }
                }
                catch (Exception e) when (e is PeerLostException or PoisonException)
                {
                    Console.WriteLine($"done wrote {written} {e.GetType().Name}");
                    return 0;
                }
            }

        case "read-seq":
        case "select-seq":
            {
                // read-seq|select-seq <kind> <name>: reads (select-seq: inside an alternation with a
                // 50 ms timer) until a read fails; every value must be the next of 0, 1, 2, ...
                AltingChannelIn<int> input = await Scenarios.InAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                var timer = new CSTimer();
                var alternative = new Alternative([input, timer]);
                int read = 0;
                try
                {
                    while (true)
                    {
                        if (args[1] == "select-seq")
                        {
                            timer.RelativeTimeOut(50);
                            if (await alternative.PriSelectAsync() != 0)
                            {
                                continue;
                            }
                        }

                        int value = await input.ReadAsync();
                        if (value != read)
                        {
                            Console.WriteLine($"failed out of order: value {value} where {read} was next");
                            return 1;
                        }

                        if (++read == 100)
                        {
                            Console.WriteLine("flowing");
                        }
                    }
                }
                catch (Exception e) when (e is PeerLostException or PoisonException)
                {
                    Console.WriteLine($"done read {read} {e.GetType().Name}");
                    return 0;
                }
            }

        case "dist-parallel":
            {
                // dist-parallel <processes> <count> <pause-at> [free-workers]: a DistParallel of CountingWriters to
                // the pools, each writing 0..count-1 to a channel of its own that this program reads,
                // checking every value is the next. With pause-at > 0 it stops reading once every
                // channel has given pause-at values (the writers are then mid-process), says
                // "flowing", and reads on when its standard input closes, until the run ends.
                int processes = int.Parse(a[0], System.Globalization.CultureInfo.InvariantCulture);
                int count = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                int pauseAt = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                int freeWorkers = a.Length > 3 ? int.Parse(a[3], System.Globalization.CultureInfo.InvariantCulture) : 0;
                return await DistParallelScenario.RunAsync(node, processes, count, pauseAt, freeWorkers);
            }

        case "poison-out":
            {
                AltingChannelOut<int> output = await Scenarios.OutAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                output.Poison();
                await Console.In.ReadLineAsync(); // stay until the test is done with the channel
                Console.WriteLine("done poisoned");
                return 0;
            }

        case "write-hold":
            {
                // write-hold <kind> <name> <count>: writes 0..count-1, says so, then waits (the test kills it).
                AltingChannelOut<int> output = await Scenarios.OutAsync(node, a[0], a[1]);
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    await output.WriteAsync(i);
                }

                Console.WriteLine($"wrote {count}");
                await Console.In.ReadLineAsync();
                return 0;
            }

        case "home-leave-buffered":
            {
                // home-leave-buffered <name> <fifo|infinite|overwrite> <slots> [bytes]: hosts the
                // buffered Any2Any channel (of int, or of byte[] with "bytes"), waits for its input
                // to close, then leaves cleanly.
                IBuffer<int>? ints = null;
                IBuffer<byte[]>? bytes = null;
                int slots = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                if (a.Length > 3 && a[3] == "bytes")
                {
                    bytes = Scenarios.Buffer<byte[]>(a[1], slots);
                    await node.GetAny2AnyInAsync(a[0], bytes);
                }
                else
                {
                    ints = Scenarios.Buffer<int>(a[1], slots);
                    await node.GetAny2AnyInAsync(a[0], ints);
                }

                Console.WriteLine("ready");
                await Console.In.ReadToEndAsync();
                await node.DisposeAsync();
                Console.WriteLine("done left");
                return 0;
            }

        case "one2any-leave":
            {
                // one2any-leave <name> <count>: creates the One2Any channel with a FifoBuffer(count),
                // says "ready", writes 0..count-1 when a line comes, says "wrote", and leaves cleanly
                // when its input closes: its readers read the values at the channel's new home.
                AltingChannelOut<int> output = await node.GetOne2AnyOutAsync(a[0], new FifoBuffer<int>(int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture)));
                Console.WriteLine("ready");
                await Console.In.ReadLineAsync();
                int count = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    await output.WriteAsync(i);
                }

                Console.WriteLine("wrote");
                await Console.In.ReadToEndAsync();
                await node.DisposeAsync();
                Console.WriteLine("done left");
                return 0;
            }

        case "write-bytes-any":
            {
                // write-bytes-any <name> <count> [lane-off]: writes count byte[] values to an Any2Any:
                // value i starts with i; every other one is 40 KiB (past the bulk lane's threshold).
                AltingChannelOut<byte[]> output = await node.GetAny2AnyOutAsync<byte[]>(a[0]);
                Console.WriteLine("ready");
                int count = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    byte[] value = new byte[i % 2 == 0 ? 40 << 10 : 16];
                    BitConverter.TryWriteBytes(value, i);
                    await output.WriteAsync(value);
                }

                Console.WriteLine($"done wrote {count}");
                return 0;
            }

        case "home-leave":
            {
                // home-leave <kind> <name>: hosts the channel (its first getter), waits for its input to
                // close, then leaves cleanly (CspNode.DisposeAsync, as CspManager.Shutdown does).
                await Scenarios.InAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                await Console.In.ReadToEndAsync();
                await node.DisposeAsync();
                Console.WriteLine("done left");
                return 0;
            }

        case "home-write-from":
        case "write-from":
            {
                // [home-]write-from <name> <first> <count>: writes first..first+count-1 to the Any2Any
                // channel. home-write-from hosts it (its getter comes first) and keeps writing while
                // another program takes the home (CspNode.BecomeHomeAsync).
                AltingChannelOut<int> output = await node.GetAny2AnyOutAsync<int>(a[0]);
                Console.WriteLine("ready");
                int first = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = first; i < first + count; i++)
                {
                    await output.WriteAsync(i);
                }

                Console.WriteLine($"done wrote {count}");
                await Console.In.ReadToEndAsync();
                return 0;
            }

        case "home-offer-order":
            {
                // home-offer-order <name> <count>: hosts the Any2Any channel and writes 0..count-1,
                // each by a selection over an offer, saying "wrote <i>" after each.
                AltingChannelOut<int> output = await node.GetAny2AnyOutAsync<int>(a[0]);
                var alternative = new Alternative([output]);
                Console.WriteLine("ready");
                int count = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    output.Offer(i);
                    if (await alternative.PriSelectAsync() != 0)
                    {
                        Console.WriteLine("failed: the selection chose no guard");
                        return 1;
                    }

                    Console.WriteLine($"wrote {i}");
                }

                Console.WriteLine($"done wrote {count}");
                await Console.In.ReadToEndAsync();
                return 0;
            }

        case "home-read-order":
        case "home-select-order":
            {
                // home-read-order | home-select-order <name> <count>: hosts the Any2Any channel and
                // reads count values, 0, 1, 2, ... in order, with ReadAsync or by selecting first,
                // saying "read <i>" after each: the test moves the home while the next read waits.
                AltingChannelIn<int> input = await node.GetAny2AnyInAsync<int>(a[0]);
                var alternative = new Alternative([input]);
                Console.WriteLine("ready");
                int count = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    if (args[1] == "home-select-order" && await alternative.SelectAsync() != 0)
                    {
                        Console.WriteLine("failed: the selection chose no guard");
                        return 1;
                    }

                    int value = await input.ReadAsync();
                    if (value != i)
                    {
                        Console.WriteLine($"failed out of order: value {value} where {i} was next");
                        return 1;
                    }

                    Console.WriteLine($"read {i}");
                }

                Console.WriteLine($"done read {count}");
                await Console.In.ReadToEndAsync();
                return 0;
            }

        case "read-order":
            {
                // read-order <kind> <name> <count>: reads count values, which must be 0, 1, 2, ... in order.
                AltingChannelIn<int> input = await Scenarios.InAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    int value = await input.ReadAsync();
                    if (value != i)
                    {
                        Console.WriteLine($"failed out of order: value {value} where {i} was next");
                        return 1;
                    }
                }

                Console.WriteLine($"done read {count}");
                return 0;
            }

        case "write-pause":
            {
                // write-pause <kind> <name> <count> <pauseAt>: writes 0..pauseAt-1, says "paused", waits for
                // its input to close, then writes the rest.
                AltingChannelOut<int> output = await Scenarios.OutAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                int count = int.Parse(a[2], System.Globalization.CultureInfo.InvariantCulture);
                int pauseAt = int.Parse(a[3], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < count; i++)
                {
                    if (i == pauseAt)
                    {
                        Console.WriteLine("paused");
                        await Console.In.ReadToEndAsync();
                    }

                    await output.WriteAsync(i);
                }

                Console.WriteLine($"done wrote {count}");
                return 0;
            }

        case "hold-out":
            {
                // hold-out <kind> <name>: attaches a writer and waits (the test kills it).
                await Scenarios.OutAsync(node, a[0], a[1]);
                Console.WriteLine("ready");
                await Console.In.ReadLineAsync();
                return 0;
            }

        case "barrier":
            {
                // barrier <name> <rounds>
                NamedBarrier barrier = await node.GetBarrierAsync(a[0]);
                Console.WriteLine("ready");
                int rounds = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                for (int i = 0; i < rounds; i++)
                {
                    await barrier.SyncAsync();
                }

                Console.WriteLine($"done synced {rounds}");
                return 0;
            }

        case "bucket-fall":
            {
                NamedBucket bucket = await node.GetBucketAsync(a[0]);
                Console.WriteLine("ready");
                await bucket.FallAsync();
                Console.WriteLine("done released");
                return 0;
            }

        case "bucket-flush":
            {
                NamedBucket bucket = await node.GetBucketAsync(a[0]);
                Console.WriteLine("ready");
                Console.WriteLine($"done flushed {await bucket.FlushAsync()}");
                return 0;
            }

        case "barrier-home":
            {
                // barrier-home <name> <enrolled>: hosts the barrier and waits (the test kills it).
                await node.GetBarrierAsync(a[0], int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture));
                Console.WriteLine("ready");
                await Console.In.ReadLineAsync();
                return 0;
            }

        case "credit-home":
            {
                // credit-home <name>: hosts a One2One with a buffer of 64 (writers get credits) and
                // the One2Any <name>/watch on the same link, reads neither, waits (the test kills it).
                await node.GetOne2OneInAsync(a[0], new FifoBuffer<int>(64));
                await node.GetOne2AnyOutAsync<int>(a[0] + "/watch");
                Console.WriteLine("ready");
                await Console.In.ReadLineAsync();
                return 0;
            }

        case "broadcast-read":
            {
                // broadcast-read <name>: enrols, then reads until poisoned; each value must be the
                // one after the last (from the first read on); says how many it read.
                BroadcastReader<int> reader = await NamedBroadcast.EnrolAsync<int>(node, a[0]);
                Console.WriteLine("ready");
                int read = 0, last = -1;
                try
                {
                    while (true)
                    {
                        int value = await reader.ReadAsync();
                        if (last >= 0 && value != last + 1)
                        {
                            Console.WriteLine($"failed out of order: value {value} after {last}");
                            return 1;
                        }

                        last = value;
                        if (++read == 100)
                        {
                            Console.WriteLine("flowing");
                        }
                    }
                }
                catch (PoisonException e)
                {
                    Console.WriteLine($"done read {read} {e.GetType().Name}");
                    return 0;
                }
            }

        case "scatter-once":
            {
                // scatter-once <scatter> <gather>: answers one piece of work (its value doubled),
                // says so, then waits for more work that the test never lets it take (it kills it).
                AltingChannelIn<Indexed<int>> work = await NamedScatter.JoinAsync<int>(node, a[0]);
                AltingChannelOut<Indexed<long>> results = await NamedGather.JoinAsync<long>(node, a[1]);
                Console.WriteLine("ready");
                Indexed<int> piece = await work.ReadAsync();
                await results.WriteAsync(new Indexed<long>(piece.Index, 2L * piece.Value));
                Console.WriteLine("worked 1");
                Indexed<int> unexpected = await work.ReadAsync();
                Console.WriteLine($"failed took a second piece of work {unexpected.Index}");
                return 1;
            }

        case "stuck-taker":
            {
                // stuck-taker <name> <values>: attaches a writer to the Any2Any channel of int and waits;
                // offered its home, it says "receiving" once that many of the buffer's values came
                // (0: when the offer itself comes) and stops there for good (the test kills it).
                await node.GetAny2AnyOutAsync<int>(a[0]);
                int stopAt = int.Parse(a[1], System.Globalization.CultureInfo.InvariantCulture);
                var never = new TaskCompletionSource();
                if (stopAt > 0)
                {
                    CspNet.Remote.Internal.Client.HandoverValues.SlowTakerForTests[a[0]] = received =>
                    {
                        if (received == stopAt)
                        {
                            Console.WriteLine("receiving");
                            never.Task.Wait();
                        }
                    };
                }
                else
                {
                    CspNet.Remote.Internal.Client.HandoverValues.DelayedTakeForTests[a[0]] = () =>
                    {
                        Console.WriteLine("receiving");
                        return never.Task;
                    };
                }

                Console.WriteLine("ready");
                await Console.In.ReadToEndAsync();
                return 0;
            }

        case "become-home-stuck":
            {
                // become-home-stuck <name>: attaches a reader to the unbuffered Any2Any channel of int;
                // when a line comes, says "asking" and asks for its home (CspNode.BecomeHomeAsync),
                // says "offered" when the offer comes and never takes it (the test kills it).
                await node.GetAny2AnyInAsync<int>(a[0]);
                var never = new TaskCompletionSource();
                CspNet.Remote.Internal.Client.HandoverValues.DelayedTakeForTests[a[0]] = () =>
                {
                    Console.WriteLine("offered");
                    return never.Task;
                };
                Console.WriteLine("ready");
                await Console.In.ReadLineAsync();
                Console.WriteLine("asking");
                await node.BecomeHomeAsync(a[0]);
                Console.WriteLine("failed became the home");
                return 1;
            }

        case "home-buffered-write-from":
            {
                // home-buffered-write-from <Any2Any|One2Any> <name> <fifo|infinite|overwrite> <slots> <first> <count> [bytes]:
                // hosts the buffered channel (its writing getter comes first) and writes first..first+count-1
                // (as int, or as byte[] starting with the number, every other one 40 KiB, past the bulk
                // lane's threshold) while another program takes the home (CspNode.BecomeHomeAsync).
                // Then a line "poison" poisons its end; the input closing ends it.
                string name = a[1];
                int slots = int.Parse(a[3], System.Globalization.CultureInfo.InvariantCulture);
                int first = int.Parse(a[4], System.Globalization.CultureInfo.InvariantCulture);
                int count = int.Parse(a[5], System.Globalization.CultureInfo.InvariantCulture);
                bool one2Any = a[0] == "One2Any";
                AltingChannelOut<int>? ints = null;
                AltingChannelOut<byte[]>? bytes = null;
                if (a.Length > 6 && a[6] == "bytes")
                {
                    IBuffer<byte[]> buffer = Scenarios.Buffer<byte[]>(a[2], slots);
                    bytes = one2Any ? await node.GetOne2AnyOutAsync(name, buffer) : await node.GetAny2AnyOutAsync(name, buffer);
                }
                else
                {
                    IBuffer<int> buffer = Scenarios.Buffer<int>(a[2], slots);
                    ints = one2Any ? await node.GetOne2AnyOutAsync(name, buffer) : await node.GetAny2AnyOutAsync(name, buffer);
                }

                Console.WriteLine("ready");
                for (int i = first; i < first + count; i++)
                {
                    if (bytes is not null)
                    {
                        byte[] value = new byte[i % 2 == 0 ? 40 << 10 : 16];
                        BitConverter.TryWriteBytes(value, i);
                        await bytes.WriteAsync(value);
                    }
                    else
                    {
                        await ints!.WriteAsync(i);
                    }
                }

                Console.WriteLine($"done wrote {count}");
                if (await Console.In.ReadLineAsync() == "poison")
                {
                    if (bytes is not null)
                    {
                        bytes.Poison();
                    }
                    else
                    {
                        ints!.Poison();
                    }

                    Console.WriteLine("poisoned");
                }

                await Console.In.ReadToEndAsync();
                return 0;
            }

        default:
            Console.Error.WriteLine($"unknown scenario {args[1]}");
            return 2;
    }
}
catch (Exception e)
{
    Console.WriteLine($"failed {e.GetType().Name}: {e.Message}");
    return 1;
}

internal static class Scenarios
{
    internal static IBuffer<T> Buffer<T>(string kind, int slots) => kind switch
    {
        "fifo" => new FifoBuffer<T>(slots),
        "infinite" => new InfiniteBuffer<T>(),
        "overwrite" => new OverwriteOldestBuffer<T>(slots),
        _ => throw new ArgumentException(kind),
    };

    internal static async Task<AltingChannelOut<int>> OutAsync(CspNode node, string kind, string name) => kind switch
    {
        "One2One" => await node.GetOne2OneOutAsync<int>(name),
        "Any2One" => await node.GetAny2OneOutAsync<int>(name),
        "One2Any" => await node.GetOne2AnyOutAsync<int>(name),
        "Any2Any" => await node.GetAny2AnyOutAsync<int>(name),
        _ => throw new ArgumentException(kind),
    };

    internal static async Task<AltingChannelIn<int>> InAsync(CspNode node, string kind, string name) => kind switch
    {
        "One2One" => await node.GetOne2OneInAsync<int>(name),
        "Any2One" => await node.GetAny2OneInAsync<int>(name),
        "One2Any" => await node.GetOne2AnyInAsync<int>(name),
        "Any2Any" => await node.GetAny2AnyInAsync<int>(name),
        _ => throw new ArgumentException(kind),
    };
}

internal static class DistParallelScenario
{
    internal static async Task<int> RunAsync(CspNode node, int processes, int count, int pauseAt, int freeWorkers)
    {
        // With freeWorkers > 0, the run starts once the NameServer lists that many free workers: a
        // pool reports its workers free again a moment after it noticed its processes were lost.
        if (freeWorkers > 0)
        {
            long since = System.Diagnostics.Stopwatch.GetTimestamp();
            while ((await node.Names!.ListPoolsAsync(1, CancellationToken.None)).Sum(p => p.FreeWorkers) < freeWorkers)
            {
                if (System.Diagnostics.Stopwatch.GetElapsedTime(since) > TimeSpan.FromSeconds(30))
                {
                    Console.WriteLine($"failed fewer than {freeWorkers} free workers listed after 30 s");
                    return 1;
                }

                await Task.Delay(100);
            }
        }

        string run = Guid.NewGuid().ToString("N")[..8];
        var inputs = new AltingChannelIn<int>[processes];
        var writers = new ICSPProcess[processes];
        for (int i = 0; i < processes; i++)
        {
            inputs[i] = await node.GetOne2OneInAsync<int>($"seq-{run}-{i}");
            writers[i] = new CspNet.Remote.TestJobs.CountingWriter($"seq-{run}-{i}", count);
        }

        var distParallel = new DistParallel(writers, node);
        Task running = distParallel.RunAsync();
        using var ended = new CancellationTokenSource();
        _ = running.ContinueWith(_ => ended.Cancel(), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

        var read = new int[processes];
        string? failure = null;
        async Task ReadAsync(int i, int upTo, CancellationToken stop)
        {
            try
            {
                while (read[i] < upTo)
                {
                    int value = await inputs[i].ReadAsync(stop);
                    if (value != read[i])
                    {
                        failure ??= $"channel {i}: value {value} where {read[i]} was next";
                    }

                    read[i]++;
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                // The run has ended: its writers that remain were lost with their pool.
            }
        }

        if (pauseAt > 0)
        {
            await Task.WhenAll(Enumerable.Range(0, processes).Select(i => ReadAsync(i, pauseAt, ended.Token)));
            Console.WriteLine("flowing");
            await Console.In.ReadToEndAsync();
        }

        await Task.WhenAll(Enumerable.Range(0, processes).Select(i => ReadAsync(i, count, ended.Token)));
        string outcome = "ok";
        try
        {
            await running;
        }
        catch (AggregateException e)
        {
            outcome = string.Join(';', e.InnerExceptions.Select(x => x is WorkerLostException lost ? $"WorkerLostException@{lost.Pool}" : x.GetType().Name));
        }

        if (failure is not null)
        {
            Console.WriteLine($"failed {failure}");
            return 1;
        }

        // done <values read per channel> <ran remotely> <ran locally> <errors, ';' between them>
        Console.WriteLine($"done {string.Join(',', read)} {distParallel.RanRemotely} {distParallel.RanLocally} {outcome}");
        return 0;
    }
}

internal sealed class Writer(IChannelOut<int> output, int count) : ICSPProcess
{
    public void Run()
    {
        for (int i = 0; i < count; i++)
        {
            output.Write(i);
        }
    }
}

internal sealed class Reader(IChannelIn<int> input, int count) : ICSPProcess
{
    public long Sum { get; private set; }

    public void Run()
    {
        for (int i = 0; i < count; i++)
        {
            Sum += input.Read();
        }
    }
}

/// <summary>Listing 5 of the CSP.NET paper, as printed, with its result kept for the test to print.</summary>
[Serializable]
internal sealed class AltReader : ICSPProcess
{
    public int Result { get; private set; }

    public void Run()
    {
        AltingChannelIn<int> plus = Factory.GetOne2OneIn<int>("plus");
        AltingChannelIn<int> minus = Factory.GetOne2OneIn<int>("minus");

        CSTimer timer = new CSTimer();
        Alternative alt = new Alternative(new Guard[] { plus, minus,
                                                       timer });

        int result = 0;
        bool done = false;
        while (!done)
        {
            timer.RelativeTimeOut(1000);
            switch (alt.FairSelect())
            {
                case 0:
                    result += plus.Read();
                    break;
                case 1:
                    result -= minus.Read();
                    break;
                case 2:
                    done = true;
                    break;
            }
        }

        Result = result;
    }
}
