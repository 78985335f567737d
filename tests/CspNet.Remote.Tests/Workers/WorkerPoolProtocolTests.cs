using CspNet.Remote.Workers;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Proto = CspNet.Remote.Protocol.Workers;

namespace CspNet.Remote.Tests.Workers;

/// <summary>The pool's answers to clients that break workerpool.proto: a status on that stream, and the pool serves on.</summary>
public sealed class WorkerPoolProtocolTests
{
    private const int Timeout = 30_000;

    [Theory(Timeout = Timeout)]
    [InlineData("job before reserve")]
    [InlineData("reserve twice")]
    [InlineData("reserve zero")]
    [InlineData("more jobs than granted")]
    [InlineData("unasked image")]
    [InlineData("bad hash")]
    [InlineData("release too many")]
    [InlineData("empty frame")]
    public async Task Run_MalformedStream_EndsWithInvalidArgumentAndThePoolServesTheNextClient(string scenario)
    {
        Proto.ClientFrame[] frames = scenario switch
        {
            "job before reserve" => [new() { Job = Job(1) }],
            "reserve twice" => [Reserve(1), Reserve(1)],
            "reserve zero" => [Reserve(0)],
            "more jobs than granted" => [Reserve(1), new() { Job = Job(1) }, new() { Job = Job(2) }],
            "unasked image" => [Reserve(1), new() { Assembly = new Proto.AssemblyChunk { Sha256 = new string('a', 64), Data = ByteString.CopyFromUtf8("x"), Last = true } }],
            "bad hash" => [Reserve(1), new() { Job = Job(1, sha: "not-a-hash") }],
            "release too many" => [Reserve(1), new() { Release = new Proto.Release { Workers = 2 } }],
            _ => [new()],
        };
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1);
        using GrpcChannel channel = UserKey.Channel(pool.Uri);
        var client = new Proto.WorkerPool.WorkerPoolClient(channel);

        using (AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> call = client.Run())
        {
            var e = await Assert.ThrowsAsync<RpcException>(async () =>
            {
                foreach (Proto.ClientFrame frame in frames)
                {
                    await call.RequestStream.WriteAsync(frame);
                }

                await call.RequestStream.CompleteAsync();
                while (await call.ResponseStream.MoveNext(CancellationToken.None))
                {
                }
            });
            Assert.True(e.StatusCode == StatusCode.InvalidArgument, $"{scenario}: {e.Status}");
        }

        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> next = client.Run();
        await next.RequestStream.WriteAsync(Reserve(1));
        Assert.True(await next.ResponseStream.MoveNext(CancellationToken.None));
        Assert.Equal(1, next.ResponseStream.Current.Granted.Workers); // the bad stream's worker came back
        await next.RequestStream.CompleteAsync();
    }

    private static Proto.ClientFrame Reserve(int workers) => new() { Reserve = new Proto.Reserve { Workers = workers, Client = "probe" } };

    private static Proto.Job Job(ulong id, string? sha = null) => new()
    {
        JobId = id,
        TypeName = "Some.Process",
        AssemblyName = "Some",
        Assemblies = { new Proto.AssemblyRef { Name = "Some", Sha256 = sha ?? new string('b', 64) } },
    };
}
