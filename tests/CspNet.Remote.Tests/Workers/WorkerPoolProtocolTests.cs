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
    [InlineData("duplicate job id")]
    [InlineData("interleaved images")]
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
            "duplicate job id" => [Reserve(2), new() { Job = Job(1) }, new() { Job = Job(1) }],
            "interleaved images" => [Reserve(2), new() { Job = Job(1) }, new() { Job = Job(2, sha: new string('c', 64)) }, Chunk('b', 10, last: false), Chunk('c', 10, last: true)],
            _ => [new()],
        };
        await AssertStreamEndsAsync(frames, StatusCode.InvalidArgument, scenario, workers: 2);
    }

    [Fact(Timeout = Timeout)]
    public async Task Run_ImageLargerThanMaxAssemblySize_EndsWithResourceExhaustedAndThePoolServesTheNextClient()
    {
        Proto.ClientFrame[] frames = [Reserve(1), new() { Job = Job(1) }, Chunk('b', 1000, last: false), Chunk('b', 1000, last: true)];

        await AssertStreamEndsAsync(frames, StatusCode.ResourceExhausted, "image over MaxAssemblySize", workers: 1, options => options.MaxAssemblySize = 1024);
    }

    [Fact(Timeout = Timeout)]
    public async Task Run_ReservedWorkersLeftIdle_EndsWithResourceExhaustedAndTheWorkersGoBack()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 2, configure: options => options.ReservationTimeout = TimeSpan.FromSeconds(1));
        using GrpcChannel channel = UserKey.Channel(pool.Uri);
        var client = new Proto.WorkerPool.WorkerPoolClient(channel);

        // Reserves every worker and then says nothing more, its connection alive.
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> silent = client.Run();
        await silent.RequestStream.WriteAsync(Reserve(2));
        Assert.True(await silent.ResponseStream.MoveNext(CancellationToken.None));
        Assert.Equal(2, silent.ResponseStream.Current.Granted.Workers);

        var e = await Assert.ThrowsAsync<RpcException>(async () => await silent.ResponseStream.MoveNext(CancellationToken.None));

        Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
        Assert.Contains("ReservationTimeout", e.Status.Detail, StringComparison.Ordinal);
        await AssertGrantedAsync(client, 2);
    }

    [Fact(Timeout = Timeout)]
    public async Task Run_JobWhoseImagesNeverCome_RefusedAfterImageTimeoutAndTheStreamEnds()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", 1, configure: options => options.ImageTimeout = TimeSpan.FromSeconds(1));
        using GrpcChannel channel = UserKey.Channel(pool.Uri);
        var client = new Proto.WorkerPool.WorkerPoolClient(channel);

        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> silent = client.Run();
        await silent.RequestStream.WriteAsync(Reserve(1));
        await silent.RequestStream.WriteAsync(new Proto.ClientFrame { Job = Job(7) });
        var frames = new List<Proto.PoolFrame>();
        var e = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            while (await silent.ResponseStream.MoveNext(CancellationToken.None))
            {
                frames.Add(silent.ResponseStream.Current);
            }
        });

        Assert.Equal(StatusCode.ResourceExhausted, e.StatusCode);
        Assert.Contains("ImageTimeout", e.Status.Detail, StringComparison.Ordinal);
        Assert.Equal([Proto.PoolFrame.FrameOneofCase.Granted, Proto.PoolFrame.FrameOneofCase.NeedAssemblies, Proto.PoolFrame.FrameOneofCase.Done], frames.Select(f => f.FrameCase));
        Assert.Equal(Proto.RefusalReason.AssemblyMissing, frames[2].Done.Refused.Reason);
        Assert.Equal(7UL, frames[2].Done.JobId);
        await AssertGrantedAsync(client, 1);
    }

    private static async Task AssertStreamEndsAsync(Proto.ClientFrame[] frames, StatusCode expected, string scenario, int workers, Action<WorkerPoolOptions>? configure = null)
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost pool = await system.PoolAsync("pool", workers, configure: configure);
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
            Assert.True(e.StatusCode == expected, $"{scenario}: {e.Status}");
        }

        await AssertGrantedAsync(client, workers); // the bad stream's workers came back
    }

    private static async Task AssertGrantedAsync(Proto.WorkerPool.WorkerPoolClient client, int workers)
    {
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> next = client.Run();
        await next.RequestStream.WriteAsync(Reserve(workers));
        Assert.True(await next.ResponseStream.MoveNext(CancellationToken.None));
        Assert.Equal(workers, next.ResponseStream.Current.Granted.Workers);
        await next.RequestStream.CompleteAsync();
    }

    private static Proto.ClientFrame Chunk(char hashDigit, int bytes, bool last) =>
        new() { Assembly = new Proto.AssemblyChunk { Sha256 = new string(hashDigit, 64), Data = ByteString.CopyFrom(new byte[bytes]), Last = last } };

    private static Proto.ClientFrame Reserve(int workers) => new() { Reserve = new Proto.Reserve { Workers = workers, Client = "probe" } };

    private static Proto.Job Job(ulong id, string? sha = null) => new()
    {
        JobId = id,
        TypeName = "Some.Process",
        AssemblyName = "Some",
        Assemblies = { new Proto.AssemblyRef { Name = "Some", Sha256 = sha ?? new string('b', 64) } },
    };
}
