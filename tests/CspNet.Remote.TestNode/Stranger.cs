using Grpc.Core;
using Grpc.Net.Client;

namespace CspNet.Remote.TestNode;

/// <summary>
/// What another user of the machine tries against a NameServer, a program and a worker pool it
/// does not own: every call as a program of its own would make, with this user's key (a program)
/// or none (a hand-written client). Prints "refused WHAT: why" or "ALLOWED WHAT" for each.
/// </summary>
internal static class Stranger
{
    private static readonly Marshaller<byte[]> Bytes = Marshallers.Create(static b => b, static b => b);

    internal static async Task<int> RunAsync(Uri nameServer, int homePort, Uri statusPage, Uri pool, string name)
    {
        // As a CspNet program of this user: join (open a lease), register a name, resolve one.
        await TryAsync("join", async () =>
        {
            await using CspNode node = await CspNode.StartAsync(new CspNodeOptions { NameServer = nameServer, NameServerTimeout = TimeSpan.FromSeconds(3) });
            _ = await node.GetOne2OneInAsync<int>("squatted-by-a-stranger");
        });

        // As a hand-written client, straight to each service: resolve, attach (then write, read or poison), submit code.
        using GrpcChannel names = GrpcChannel.ForAddress(nameServer);
        await TryAsync("resolve", () => Unary(names, "/cspnet.nameserver.v1.NameServer/Resolve"));
        await TryAsync("register", () => Unary(names, "/cspnet.nameserver.v1.NameServer/OpenLease"));
        using GrpcChannel home = GrpcChannel.ForAddress(new Uri($"http://127.0.0.1:{homePort}"));
        await TryAsync("attach " + name, () => Duplex(home, "/cspnet.link.v1.Link/Connect"));
        using GrpcChannel workers = GrpcChannel.ForAddress(pool);
        await TryAsync("submit code", () => Duplex(workers, "/cspnet.workerpool.v1.WorkerPool/Run"));
        await TryAsync("status page", async () =>
        {
            using var http = new HttpClient();
            using HttpResponseMessage page = await http.GetAsync(statusPage);
            if (!page.IsSuccessStatusCode)
            {
                throw new HttpRequestException($"HTTP {(int)page.StatusCode}");
            }
        });
        Console.WriteLine("done");
        return 0;
    }

    private static async Task TryAsync(string what, Func<Task> attempt)
    {
        try
        {
            await attempt();
            Console.WriteLine($"ALLOWED {what}");
        }
        catch (Exception e)
        {
            Console.WriteLine($"refused {what}: {e.GetType().Name}: {e.Message.ReplaceLineEndings(" ")}");
        }
    }

    private static async Task Unary(GrpcChannel channel, string method)
    {
        var call = new Method<byte[], byte[]>(MethodType.Unary, method.Split('/')[1], method.Split('/')[2], Bytes, Bytes);
        _ = await channel.CreateCallInvoker().AsyncUnaryCall(call, null, new CallOptions(deadline: DateTime.UtcNow.AddSeconds(10)), []);
    }

    private static async Task Duplex(GrpcChannel channel, string method)
    {
        var call = new Method<byte[], byte[]>(MethodType.DuplexStreaming, method.Split('/')[1], method.Split('/')[2], Bytes, Bytes);
        using AsyncDuplexStreamingCall<byte[], byte[]> stream = channel.CreateCallInvoker().AsyncDuplexStreamingCall(call, null, new CallOptions(deadline: DateTime.UtcNow.AddSeconds(10)));

        // A refused call ends at once with its status; an admitted one waits for the client's first frame.
        using var admitted = new CancellationTokenSource(TimeSpan.FromSeconds(3));
        try
        {
            _ = await stream.ResponseStream.MoveNext(admitted.Token);
        }
        catch (RpcException e) when (admitted.IsCancellationRequested && e.StatusCode == StatusCode.Cancelled)
        {
            // Still running after 3 s: the server let this caller in.
        }
    }
}
