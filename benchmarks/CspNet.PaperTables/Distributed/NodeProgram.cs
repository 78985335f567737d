using System.Globalization;
using System.Net;
using System.Net.Sockets;
using CspNet.Remote;
using CspNet.Remote.Collectives;

namespace CspNet.PaperTables.Distributed;

/// <summary>
/// A child program of the distributed tables (<c>--node ROLE ...</c>): joins through the NameServer
/// in <see cref="Cluster.NameServerVariable"/>, creates the channels it hosts, prints
/// <see cref="Cluster.ReadyLine"/>, and serves until its standard input closes.
/// </summary>
internal static class NodeProgram
{
    internal static async Task<int> RunAsync(string[] role)
    {
        Uri nameServer = new(Environment.GetEnvironmentVariable(Cluster.NameServerVariable)
            ?? throw new InvalidOperationException($"{Cluster.NodeSwitch} is for the child programs of --distributed ({Cluster.NameServerVariable} is not set)."));
        await using CspNode node = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer, ProgramLabel = "papers-" + string.Join('-', role) });
        using var stop = new CancellationTokenSource();
        Task<Task> work = role[0] switch
        {
            "pong" => PongAsync(node, stop.Token),
            "sink" => SinkAsync(node, Index(role, 1), stop.Token),
            "pi-rr" => PiRequestRespondAsync(node, Index(role, 1), stop.Token),
            "pi-sg" => PiScatterGatherAsync(node, Index(role, 1), stop.Token),
            "mandel" => MandelbrotAsync(node, Index(role, 1), stop.Token),
            "ring" => RingAsync(node, Index(role, 1), Index(role, 2), stop.Token),
            _ => throw new ArgumentException($"Unknown role '{role[0]}'.", nameof(role)),
        };

        // Each role returns once its channels exist (then it is ready) with the task that serves.
        Task serving = await work;
        Task stdinClosed = Task.Run(() =>
        {
            while (Console.In.ReadLine() is not null)
            {
            }
        });
        await Task.WhenAny(serving, stdinClosed);
        await stop.CancelAsync();
        try
        {
            await serving;
        }
        catch (Exception e) when (e is OperationCanceledException or PoisonException)
        {
        }

        return 0;
    }

    private static int Index(string[] role, int at) => int.Parse(role[at], CultureInfo.InvariantCulture);

    private static void Ready(string detail = "") => Console.WriteLine(Cluster.ReadyLine + " " + detail);

    /// <summary>Echoes every value of pp/sync and pp/buffered back, and every message of a TCP connection.</summary>
    private static async Task<Task> PongAsync(CspNode node, CancellationToken stop)
    {
        AltingChannelIn<byte[]> sync = await node.GetOne2OneInAsync<byte[]>("pp/sync/ping", cancellationToken: stop);
        AltingChannelIn<byte[]> buffered = await node.GetOne2OneInAsync("pp/buffered/ping", new FifoBuffer<byte[]>(4), cancellationToken: stop);
        Socket listener = RawTcpLink.NewSocket();
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        Ready(listener.LocalEndPoint!.ToString()!);

        async Task EchoAsync(AltingChannelIn<byte[]> input, string back)
        {
            AltingChannelOut<byte[]> output = await node.GetOne2OneOutAsync<byte[]>(back, cancellationToken: stop);
            while (true)
            {
                await output.WriteAsync(await input.ReadAsync(stop), stop);
            }
        }

        async Task EchoTcpAsync()
        {
            using (listener)
            {
                using Socket accepted = await listener.AcceptAsync(stop);
                await using RawTcpLink link = RawTcpLink.Accepted(accepted);
                while (await link.ReceiveAsync(stop) is { } message)
                {
                    await link.SendAsync(message, stop);
                }
            }
        }

        return Task.WhenAll(EchoAsync(sync, "pp/sync/pong"), EchoAsync(buffered, "pp/buffered/pong"), EchoTcpAsync());
    }

    /// <summary>
    /// A broadcast reader: enrolled in the named broadcast bc/all (reader 0 also in bc/one, the
    /// point-to-point case), takes every value; on TCP, answers each message that asks (a first byte of 1) with one byte.
    /// </summary>
    private static async Task<Task> SinkAsync(CspNode node, int index, CancellationToken stop)
    {
        List<BroadcastReader<byte[]>> inputs = [await NamedBroadcast.EnrolAsync<byte[]>(node, "bc/all", cancellationToken: stop)];
        if (index == 0)
        {
            inputs.Add(await NamedBroadcast.EnrolAsync<byte[]>(node, "bc/one", cancellationToken: stop));
        }

        Socket listener = RawTcpLink.NewSocket();
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        Ready(listener.LocalEndPoint!.ToString()!);

        async Task ReadAsync(BroadcastReader<byte[]> input)
        {
            while (true)
            {
                _ = await input.ReadAsync(stop);
            }
        }

        async Task ReadTcpAsync()
        {
            using (listener)
            {
                using Socket accepted = await listener.AcceptAsync(stop);
                await using RawTcpLink link = RawTcpLink.Accepted(accepted);
                byte[] ack = [1];
                while (await link.ReceiveAsync(stop) is { } message)
                {
                    if (message.Length > 0 && message.Span[0] == 1)
                    {
                        await link.SendAsync(ack, stop);
                    }
                }
            }
        }

        return Task.WhenAll([.. inputs.Select(ReadAsync), ReadTcpAsync()]);
    }

    /// <summary>
    /// Request-respond Monte Carlo pi (paper 001, 4.3.2): asks for work on pi-rr/request/I with the
    /// hits of the last packet (-1 at first), gets a packet's iterations on pi-rr/work/I (0: stop).
    /// </summary>
    private static async Task<Task> PiRequestRespondAsync(CspNode node, int index, CancellationToken stop)
    {
        string me = index.ToString(CultureInfo.InvariantCulture);
        AltingChannelIn<long> work = await node.GetOne2OneInAsync<long>("pi-rr/work/" + me, cancellationToken: stop);
        Ready();
        return Task.Run(
            async () =>
            {
                AltingChannelOut<long> request = await node.GetOne2OneOutAsync<long>("pi-rr/request/" + me, cancellationToken: stop);
                long hits = -1;
                ulong seed = (ulong)(index + 1) * 0x9E3779B97F4A7C15UL;
                while (true)
                {
                    await request.WriteAsync(hits, stop);
                    long iterations = await work.ReadAsync(stop);
                    if (iterations <= 0)
                    {
                        return;
                    }

                    hits = Workloads.PiHits(iterations, seed++);
                }
            },
            stop);
    }

    /// <summary>
    /// Scatter-gather Monte Carlo pi (paper 001, 4.3.3): takes a packet from the named scatter
    /// pi-sg/work (the first free worker gets it; 0: stop), sends its hits with the packet's index to the gather pi-sg/result.
    /// </summary>
    private static async Task<Task> PiScatterGatherAsync(CspNode node, int index, CancellationToken stop)
    {
        AltingChannelIn<Indexed<long>> work = await NamedScatter.JoinAsync<long>(node, "pi-sg/work", stop);
        AltingChannelOut<Indexed<long>> result = await NamedGather.JoinAsync<long>(node, "pi-sg/result", stop);
        Ready();
        return Task.Run(
            async () =>
            {
                ulong seed = (ulong)(index + 1) * 0x9E3779B97F4A7C15UL;
                while (true)
                {
                    Indexed<long> packet = await work.ReadAsync(stop);
                    if (packet.Value <= 0)
                    {
                        return;
                    }

                    await result.WriteAsync(new Indexed<long>(packet.Index, Workloads.PiHits(packet.Value, seed++)), stop);
                }
            },
            stop);
    }

    /// <summary>A Mandelbrot farmer's worker (paper 002): sends the last row computed (empty at first) on mb/result/I, gets the next job on mb/job/I.</summary>
    private static async Task<Task> MandelbrotAsync(CspNode node, int index, CancellationToken stop)
    {
        string me = index.ToString(CultureInfo.InvariantCulture);
        AltingChannelIn<byte[]> jobs = await node.GetOne2OneInAsync<byte[]>("mb/job/" + me, cancellationToken: stop);
        Ready();
        return Task.Run(
            async () =>
            {
                AltingChannelOut<byte[]> results = await node.GetOne2OneOutAsync<byte[]>("mb/result/" + me, cancellationToken: stop);
                byte[] row = [];
                while (true)
                {
                    await results.WriteAsync(row, stop);
                    (int index, int width, int height) = Workloads.ReadMandelbrotJob(await jobs.ReadAsync(stop));
                    if (index < 0)
                    {
                        return;
                    }

                    row = Workloads.MandelbrotRow(index, width, height);
                }
            },
            stop);
    }

    /// <summary>A token ring member (paper 003): passes every token from ring/I to ring/(I+1 mod N).</summary>
    private static async Task<Task> RingAsync(CspNode node, int index, int members, CancellationToken stop)
    {
        AltingChannelIn<int> input = await node.GetOne2OneInAsync<int>("ring/" + index.ToString(CultureInfo.InvariantCulture), cancellationToken: stop);
        Ready();
        return Task.Run(
            async () =>
            {
                AltingChannelOut<int> output = await node.GetOne2OneOutAsync<int>("ring/" + ((index + 1) % members).ToString(CultureInfo.InvariantCulture), cancellationToken: stop);
                while (true)
                {
                    await output.WriteAsync(await input.ReadAsync(stop), stop);
                }
            },
            stop);
    }
}
