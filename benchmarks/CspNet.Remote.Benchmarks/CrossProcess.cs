using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CspNet.NameServer;
using Microsoft.AspNetCore.Builder;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// <c>crossproc [--warmup SECONDS] [--rounds N] [--round SECONDS] [--only sync|stream] [--sizes BYTES,...]
/// [--cases TEXT,...]</c>: the writer and the reader as separate OS programs, as users run them.
/// <c>--sizes</c> keeps the sizes listed, <c>--cases</c> the methods whose label contains one of the
/// texts (a profile of one method: <c>--cases "named sync" --sizes 65536 --warmup 5 --round 20 --rounds 1</c>,
/// then attach to the process ids the writer prints). This program is the writer; for each transport it
/// starts a reader program (this executable with <c>crossproc-serve KIND</c>, the large-value GC
/// settings of <see cref="RemoteBenchmarkConfig.LargeValueGc"/> in its environment) and connects to
/// it on 127.0.0.1:
/// <list type="bullet">
/// <item><c>named</c>: the reader program runs a NameServer and a CspNode that hosts, per size, an
/// unbuffered One2One <c>byte[]</c> for each of two writers (a reader loop takes every value; one
/// writer uses the bulk lane, the other has <see cref="CspNodeOptions.BulkLane"/> off) and one with a
/// <see cref="FifoBuffer{T}"/> of <see cref="StreamBuffer"/> values for each writer (a reader
/// answers each burst of <see cref="NamedThroughput.Burst"/> with one value on a channel homed in
/// the writer program).</item>
/// <item><c>tcp</c>: <see cref="RawTcp.ServeAsync"/> on an accepted connection.</item>
/// <item><c>uds</c>: the same on a Unix domain socket (the bulk lane's transport between programs
/// on one host, so the named channel's same-host figures have their own raw baseline).</item>
/// <item><c>grpc</c>: <see cref="RawGrpc.StartServerAsync"/>'s Kestrel server.</item>
/// </list>
/// Per size and per transport: warm-up (at least <c>--warmup</c> seconds, and until the writer's JIT
/// is quiet), then rounds of at least <c>--round</c> seconds each; the figure is the median round. The transports of one size are measured one after the other, so
/// every ratio compares figures of the same minute. A reader program ends when its standard input
/// closes, so none outlives the writer.
/// </summary>
internal static class CrossProcess
{
    internal const string Name = "crossproc";

    internal const string ServeName = "crossproc-serve";

    /// <summary>
    /// The named buffered stream's buffer for values of <paramref name="size"/> bytes: room for the
    /// <see cref="RawTcp.SocketBufferSize"/> bytes the raw TCP pair's socket buffers hold, at least
    /// <see cref="NamedThroughput.BufferCapacity"/> values and at most the 256 a writer's credits
    /// cover, as a user sizes a stream's buffer to the link (docs/DISTRIBUTED.md).
    /// </summary>
    internal static int StreamBuffer(int size) => Math.Clamp(RawTcp.SocketBufferSize / size, NamedThroughput.BufferCapacity, 256);

    private static readonly int[] SyncSizes = [1, 1 << 10, 64 << 10, 1 << 20, 4 << 20];

    private static readonly int[] StreamSizes = [64 << 10, 1 << 20, 4 << 20];

    private const string ReadyPrefix = "READY ";

    internal static async Task<int> RunAsync(string[] args)
    {
        // The writer runs with the same GC settings as the readers: started without them, it starts itself again with them.
        if (Environment.GetEnvironmentVariable(RemoteBenchmarkConfig.LargeValueGc[0].Name) is null)
        {
            using Process writer = Process.Start(StartInfo(args)) ?? throw new InvalidOperationException("The writer program did not start.");
            await writer.WaitForExitAsync();
            return writer.ExitCode;
        }

        double warmup = Option(args, "--warmup", 3), round = Option(args, "--round", 1);
        int rounds = (int)Option(args, "--rounds", 5);
        int only = Array.IndexOf(args, "--only");
        string part = only >= 0 && only + 1 < args.Length ? args[only + 1] : "all";
        int[] sizes = TextOption(args, "--sizes") is { } listed ? [.. listed.Split(',').Select(size => int.Parse(size, CultureInfo.InvariantCulture))] : [.. SyncSizes, .. StreamSizes];
        string[] kept = TextOption(args, "--cases")?.Split(',') ?? [""];
        var sync = (part == "stream" ? [] : SyncSizes.Intersect(sizes)).ToDictionary(size => size, _ => new Dictionary<string, double>());
        var stream = (part == "sync" ? [] : StreamSizes.Intersect(sizes)).ToDictionary(size => size, _ => new Dictionary<string, double>());

        await using (Reader named = Reader.Start("named"))
        await using (Reader tcp = Reader.Start("tcp"))
        await using (Reader grpc = Reader.Start("grpc"))
        await using (Reader uds = Reader.Start("uds"))
        {
            Uri nameServer = new(await named.ReadyAsync());
            Console.Error.WriteLine(Invariant($"writer pid {Environment.ProcessId}, named reader pid {named.ProcessId}, tcp reader pid {tcp.ProcessId}, grpc reader pid {grpc.ProcessId}"));
            await using CspNode writer = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer, ProgramLabel = "crossproc-writer" });
            await using CspNode linkOnlyWriter = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer, ProgramLabel = "crossproc-writer-link-only", BulkLane = false });
            string[] tcpAddress = (await tcp.ReadyAsync()).Split(':');
            await using RawTcp rawTcp = await RawTcp.ConnectAsync(new IPEndPoint(IPAddress.Parse(tcpAddress[0]), int.Parse(tcpAddress[1], CultureInfo.InvariantCulture)));
            await using RawGrpc rawGrpc = RawGrpc.Connect(await grpc.ReadyAsync());
            await using RawTcp rawUds = await RawTcp.ConnectAsync(new UnixDomainSocketEndPoint(await uds.ReadyAsync()));
            AltingChannelIn<byte[]> done = await writer.GetOne2OneInAsync<byte[]>("crossproc/done");

            foreach (int size in sync.Keys)
            {
                byte[] value = NewValue(size);
                AltingChannelOut<byte[]> output = await writer.GetOne2OneOutAsync<byte[]>("crossproc/sync/" + size.ToString(CultureInfo.InvariantCulture));
                AltingChannelOut<byte[]> linkOnly = await linkOnlyWriter.GetOne2OneOutAsync<byte[]>("crossproc/sync-link-only/" + size.ToString(CultureInfo.InvariantCulture));
                (string, Func<Task>)[] cases =
                [
                    ("named sync write", async () => await output.WriteAsync(value)),
                    ("named, lane off", async () => await linkOnly.WriteAsync(value)),
                    ("raw TCP write+ack", async () =>
                    {
                        await rawTcp.SendAsync(value, ack: true);
                        await rawTcp.ReceiveAckAsync();
                    }),
                    ("raw Unix socket write+ack", async () =>
                    {
                        await rawUds.SendAsync(value, ack: true);
                        await rawUds.ReceiveAckAsync();
                    }),
                    ("raw gRPC write+ack", async () =>
                    {
                        await rawGrpc.SendAsync(value, ack: true);
                        _ = await rawGrpc.ReceiveAckAsync();
                    }),
                ];
                foreach ((string label, Func<Task> operation) in cases.Where(@case => Kept(@case.Item1, kept)))
                {
                    sync[size][label] = await MeasureAsync(operation, 1, warmup, round, rounds);
                    Console.Error.WriteLine(Invariant($"{label} {size} B: {sync[size][label]:F1} us"));
                }
            }

            foreach (int size in stream.Keys)
            {
                byte[] value = NewValue(size);
                AltingChannelOut<byte[]> output = await writer.GetOne2OneOutAsync<byte[]>("crossproc/buffered/" + size.ToString(CultureInfo.InvariantCulture));
                AltingChannelOut<byte[]> linkOnly = await linkOnlyWriter.GetOne2OneOutAsync<byte[]>("crossproc/buffered-link-only/" + size.ToString(CultureInfo.InvariantCulture));
                int burst = NamedThroughput.Burst;
                (string, Func<Task>)[] cases =
                [
                    ("named buffered stream", async () =>
                    {
                        for (int i = 0; i < burst; i++)
                        {
                            await output.WriteAsync(value);
                        }

                        _ = await done.ReadAsync();
                    }),
                    ("named stream, lane off", async () =>
                    {
                        for (int i = 0; i < burst; i++)
                        {
                            await linkOnly.WriteAsync(value);
                        }

                        _ = await done.ReadAsync();
                    }),
                    ("raw TCP stream", async () =>
                    {
                        for (int i = 0; i < burst; i++)
                        {
                            await rawTcp.SendAsync(value, ack: i == burst - 1);
                        }

                        await rawTcp.ReceiveAckAsync();
                    }),
                    ("raw Unix socket stream", async () =>
                    {
                        for (int i = 0; i < burst; i++)
                        {
                            await rawUds.SendAsync(value, ack: i == burst - 1);
                        }

                        await rawUds.ReceiveAckAsync();
                    }),
                    ("raw gRPC stream", async () =>
                    {
                        for (int i = 0; i < burst; i++)
                        {
                            await rawGrpc.SendAsync(value, ack: i == burst - 1);
                        }

                        _ = await rawGrpc.ReceiveAckAsync();
                    }),
                ];
                foreach ((string label, Func<Task> operation) in cases.Where(@case => Kept(@case.Item1, kept)))
                {
                    double microseconds = await MeasureAsync(operation, burst, warmup, round, rounds);
                    stream[size][label] = size / microseconds; // bytes per µs = MB/s
                    Console.Error.WriteLine(Invariant($"{label} {size} B: {stream[size][label]:F0} MB/s"));
                }
            }
        }

        Console.WriteLine(Invariant($"Two OS programs on 127.0.0.1; a warm-up of {warmup} s or more (until the writer's JIT is quiet; its JIT in one case's rounds at most {s_jitInRounds.TotalMilliseconds:F0} ms), median of {rounds} rounds of >= {round} s; load {File.ReadAllText("/proc/loadavg").Trim()}"));
        Console.WriteLine();
        Console.WriteLine("| value | named sync write | named, lane off | raw TCP write+ack | raw Unix socket write+ack | raw gRPC write+ack | named / raw TCP | named / raw Unix socket | named / raw gRPC | lane on / off |");
        Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach ((int size, Dictionary<string, double> row) in sync)
        {
            double named = Figure(row, "named sync write"), linkOnly = Figure(row, "named, lane off"), tcp = Figure(row, "raw TCP write+ack"), unix = Figure(row, "raw Unix socket write+ack"), grpc = Figure(row, "raw gRPC write+ack");
            Console.WriteLine($"| {Describe(size)} | {Cell(named, "N1", " µs")} | {Cell(linkOnly, "N1", " µs")} | {Cell(tcp, "N1", " µs")} | {Cell(unix, "N1", " µs")} | {Cell(grpc, "N1", " µs")} | {Cell(named / tcp, "F2", "x")} | {Cell(named / unix, "F2", "x")} | {Cell(named / grpc, "F2", "x")} | {Cell(named / linkOnly, "F2", "x")} |");
        }

        Console.WriteLine();
        Console.WriteLine(string.Join(", ", stream.Select(entry => $"{Describe(entry.Key)}: a buffer of {StreamBuffer(entry.Key)} values")) + " (the named buffered streams)");
        Console.WriteLine();
        Console.WriteLine("| value | named buffered stream | named stream, lane off | raw TCP stream | raw Unix socket stream | raw gRPC stream | named / raw TCP | named / raw Unix socket | named / raw gRPC | lane on / off |");
        Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach ((int size, Dictionary<string, double> row) in stream)
        {
            double named = Figure(row, "named buffered stream"), linkOnly = Figure(row, "named stream, lane off"), tcp = Figure(row, "raw TCP stream"), unix = Figure(row, "raw Unix socket stream"), grpc = Figure(row, "raw gRPC stream");
            Console.WriteLine($"| {Describe(size)} | {Cell(named, "N0", " MB/s")} | {Cell(linkOnly, "N0", " MB/s")} | {Cell(tcp, "N0", " MB/s")} | {Cell(unix, "N0", " MB/s")} | {Cell(grpc, "N0", " MB/s")} | {Cell(named / tcp, "F2", "x")} | {Cell(named / unix, "F2", "x")} | {Cell(named / grpc, "F2", "x")} | {Cell(named / linkOnly, "F2", "x")} |");
        }

        return 0;
    }

    /// <summary>The reader program: serves one transport until its standard input closes.</summary>
    internal static async Task<int> ServeAsync(string kind)
    {
        switch (kind)
        {
            case "named":
                await using (NameServerHost nameServer = await NameServerHost.StartAsync())
                await using (CspNode home = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer.Uri, ProgramLabel = "crossproc-reader" }))
                {
                    using var stop = new CancellationTokenSource();
                    var readers = new List<Task>();
                    foreach (int size in SyncSizes)
                    {
                        // One channel per writer: the bulk lane's, and the link-only writer's.
                        foreach (string prefix in new[] { "crossproc/sync/", "crossproc/sync-link-only/" })
                        {
                            AltingChannelIn<byte[]> input = await home.GetOne2OneInAsync<byte[]>(prefix + size.ToString(CultureInfo.InvariantCulture));
                            readers.Add(NamedPair.ReadForeverAsync(input, stop.Token));
                        }
                    }

                    // One writing end of the writer's One2One "crossproc/done" for every stream size: a
                    // One2One has one writing end, so each size's reader must not ask for its own. The
                    // writer creates the channel after this program is ready, so it is got once, lazily.
                    var done = new Lazy<Task<AltingChannelOut<byte[]>>>(() => home.GetOne2OneOutAsync<byte[]>("crossproc/done", cancellationToken: stop.Token).AsTask());
                    foreach (int size in StreamSizes)
                    {
                        // Only one stream runs at a time: the readers share the one writing end of "crossproc/done".
                        foreach (string prefix in new[] { "crossproc/buffered/", "crossproc/buffered-link-only/" })
                        {
                            AltingChannelIn<byte[]> input = await home.GetOne2OneInAsync(prefix + size.ToString(CultureInfo.InvariantCulture), new FifoBuffer<byte[]>(StreamBuffer(size)));
                            readers.Add(AnswerBurstsAsync(done, input, stop.Token));
                        }
                    }

                    Console.WriteLine(ReadyPrefix + nameServer.Uri);
                    await WaitForStdinCloseAsync();
                    await stop.CancelAsync();
                    await Task.WhenAll(readers);
                }

                return 0;
            case "tcp":
                using (Socket listener = RawTcp.NewSocket())
                {
                    await ServeRawAsync(listener, new IPEndPoint(IPAddress.Loopback, 0), endPoint => endPoint.ToString()!);
                }

                return 0;
            case "uds":
                string directory = Directory.CreateTempSubdirectory("cspnet-crossproc-").FullName;
                try
                {
                    using Socket listener = RawTcp.NewUnixSocket();
                    string path = Path.Combine(directory, "raw.sock");
                    await ServeRawAsync(listener, new UnixDomainSocketEndPoint(path), _ => path);
                }
                finally
                {
                    Directory.Delete(directory, recursive: true);
                }

                return 0;
            case "grpc":
                (WebApplication server, string address) = await RawGrpc.StartServerAsync();
                await using (server)
                {
                    Console.WriteLine(ReadyPrefix + address);
                    await WaitForStdinCloseAsync();
                    await server.StopAsync();
                }

                return 0;
            default:
                throw new ArgumentException($"{ServeName} takes named, tcp, uds or grpc, not '{kind}'.", nameof(kind));
        }
    }

    /// <summary>The raw socket reader: prints where it listens, serves one connection until standard input closes.</summary>
    private static async Task ServeRawAsync(Socket listener, EndPoint endPoint, Func<EndPoint, string> address)
    {
        listener.Bind(endPoint);
        listener.Listen(1);
        Console.WriteLine(ReadyPrefix + address(listener.LocalEndPoint!));
        Task serving = Task.Run(async () =>
        {
            using Socket connection = await listener.AcceptAsync();
            await RawTcp.ServeAsync(connection);
        });
        await WaitForStdinCloseAsync();
        listener.Close();
        await serving.ContinueWith(_ => { }, TaskScheduler.Default);
    }

    /// <summary>Reads bursts from the buffered channel; after each one, tells the writer program on its channel.</summary>
    private static async Task AnswerBurstsAsync(Lazy<Task<AltingChannelOut<byte[]>>> done, AltingChannelIn<byte[]> input, CancellationToken stop)
    {
        byte[] answer = [1];
        try
        {
            while (true)
            {
                for (int i = 0; i < NamedThroughput.Burst; i++)
                {
                    _ = await input.ReadAsync(stop);
                }

                await (await done.Value).WriteAsync(answer, stop);
            }
        }
        catch (OperationCanceledException)
        {
        }
        catch (PoisonException)
        {
        }
    }

    private static Task WaitForStdinCloseAsync() => Task.Run(() =>
    {
        while (Console.In.ReadLine() is not null)
        {
        }
    });

    /// <summary>The most JIT time one second of warm-up may still take for the writer to count as warm.</summary>
    private static readonly TimeSpan QuietJit = TimeSpan.FromMilliseconds(20);

    /// <summary>The most JIT time the writer spent in one case's rounds, over the run (printed with the figures).</summary>
    private static TimeSpan s_jitInRounds;

    /// <summary>
    /// Runs <paramref name="operation"/> for the warm-up, then the rounds; returns the median round's
    /// µs per value. The warm-up lasts <paramref name="warmup"/> seconds or more: it goes on (at most
    /// a minute) until a second passes in which this program's JIT compiled for less than
    /// <see cref="QuietJit"/>, since tiered compilation recompiles a path's hot methods for seconds
    /// after it is first taken, and the named channel's paths are far longer than raw TCP's.
    /// </summary>
    private static async Task<double> MeasureAsync(Func<Task> operation, int valuesPerOperation, double warmup, double round, int rounds)
    {
        var warming = Stopwatch.StartNew();
        _ = await RunForAsync(operation, valuesPerOperation, warmup);
        while (warming.Elapsed < TimeSpan.FromMinutes(1))
        {
            TimeSpan compiled = System.Runtime.JitInfo.GetCompilationTime();
            _ = await RunForAsync(operation, valuesPerOperation, 1);
            if (System.Runtime.JitInfo.GetCompilationTime() - compiled < QuietJit)
            {
                break;
            }
        }

        TimeSpan before = System.Runtime.JitInfo.GetCompilationTime();
        var figures = new List<double>();
        for (int i = 0; i < rounds; i++)
        {
            figures.Add(await RunForAsync(operation, valuesPerOperation, round));
        }

        TimeSpan jit = System.Runtime.JitInfo.GetCompilationTime() - before;
        s_jitInRounds = jit > s_jitInRounds ? jit : s_jitInRounds;
        figures.Sort();
        return figures[figures.Count / 2];
    }

    private static async Task<double> RunForAsync(Func<Task> operation, int valuesPerOperation, double seconds)
    {
        var time = Stopwatch.StartNew();
        long operations = 0;
        do
        {
            await operation();
            operations++;
        }
        while (time.Elapsed.TotalSeconds < seconds);
        return time.Elapsed.TotalMicroseconds / (operations * valuesPerOperation);
    }

    private static double Option(string[] args, string name, double fallback) =>
        TextOption(args, name) is { } text ? double.Parse(text, CultureInfo.InvariantCulture) : fallback;

    private static string? TextOption(string[] args, string name)
    {
        int at = Array.IndexOf(args, name);
        return at >= 0 && at + 1 < args.Length ? args[at + 1] : null;
    }

    private static bool Kept(string label, string[] kept) => kept.Any(text => label.Contains(text, StringComparison.OrdinalIgnoreCase));

    /// <summary>A method's figure, NaN when <c>--cases</c> left it out.</summary>
    private static double Figure(Dictionary<string, double> row, string label) => row.TryGetValue(label, out double figure) ? figure : double.NaN;

    /// <summary>A table cell: the figure with its unit, or a dash for a case <c>--cases</c> left out.</summary>
    private static string Cell(double figure, string format, string unit) =>
        double.IsNaN(figure) ? "–" : figure.ToString(format, CultureInfo.InvariantCulture) + unit;

    private static byte[] NewValue(int size)
    {
        var value = new byte[size];
        Random.Shared.NextBytes(value);
        return value;
    }

    private static string Describe(int size) => size switch
    {
        >= 1 << 20 => Invariant($"{size >> 20} MB"),
        >= 1 << 10 => Invariant($"{size >> 10} KB"),
        _ => Invariant($"{size} B"),
    };

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);

    /// <summary>This executable with <paramref name="args"/> and the large-value GC settings in its environment.</summary>
    private static ProcessStartInfo StartInfo(string[] args)
    {
        string path = Environment.ProcessPath ?? throw new InvalidOperationException("The benchmark's executable path is unknown.");
        var start = new ProcessStartInfo(path) { UseShellExecute = false };
        if (Path.GetFileNameWithoutExtension(path) == "dotnet")
        {
            start.ArgumentList.Add(typeof(CrossProcess).Assembly.Location);
        }

        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        foreach ((string name, string value) in RemoteBenchmarkConfig.LargeValueGc)
        {
            start.Environment[name] = value;
        }

        return start;
    }

    /// <summary>A reader program: this executable with <c>crossproc-serve KIND</c>; ended by closing its standard input.</summary>
    private sealed class Reader : IAsyncDisposable
    {
        private readonly Process _process;

        private Reader(Process process) => _process = process;

        /// <summary>The reader program's process id (to attach a profiler).</summary>
        internal int ProcessId => _process.Id;

        internal static Reader Start(string kind)
        {
            ProcessStartInfo start = StartInfo([ServeName, kind]);
            start.RedirectStandardInput = true;
            start.RedirectStandardOutput = true;
            return new Reader(Process.Start(start) ?? throw new InvalidOperationException($"The {kind} reader program did not start."));
        }

        /// <summary>The address the reader printed once it serves.</summary>
        internal async Task<string> ReadyAsync()
        {
            while (await _process.StandardOutput.ReadLineAsync() is string line)
            {
                if (line.StartsWith(ReadyPrefix, StringComparison.Ordinal))
                {
                    return line[ReadyPrefix.Length..];
                }
            }

            throw new InvalidOperationException("A reader program ended before it served.");
        }

        public async ValueTask DisposeAsync()
        {
            _process.StandardInput.Close();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            try
            {
                await _process.WaitForExitAsync(timeout.Token);
            }
            catch (OperationCanceledException)
            {
                _process.Kill(entireProcessTree: true);
            }

            _process.Dispose();
        }
    }
}
