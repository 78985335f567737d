using Parallel = CspNet.Parallel;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// A blocking call on a remote end, barrier or bucket made inside an async process would hold a
/// thread-pool thread for a network round trip: it is refused, as the core's blocking calls are,
/// with an <see cref="InvalidOperationException"/> naming the async twin, before anything is sent.
/// </summary>
public sealed class BlockingInAsyncProcessTests
{
    [Theory(Timeout = 30_000)]
    [InlineData("Read", "ReadAsync()")]
    [InlineData("Write", "WriteAsync(value)")]
    [InlineData("Sync", "SyncAsync()")]
    [InlineData("Fall", "FallAsync()")]
    [InlineData("Flush", "FlushAsync()")]
    [InlineData("GetBucket", "GetBucketAsync(name)")]
    public async Task RemoteBlockingCall_InAsyncProcess_ThrowsNamingTheAsyncTwin(string call, string asyncTwin)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home");
        CspNode user = await system.NodeAsync("user");
        AltingChannelOut<int> toUser = await home.GetOne2AnyOutAsync<int>("to-user", new FifoBuffer<int>(4));
        await home.GetOne2OneInAsync<int>("from-user", new FifoBuffer<int>(4));
        await home.GetBarrierAsync("meet", enrolled: 2);
        await home.GetBucketAsync("pail");
        AltingChannelIn<int> input = await user.GetOne2AnyInAsync<int>("to-user");
        AltingChannelOut<int> output = await user.GetOne2OneOutAsync<int>("from-user");
        NamedBarrier barrier = await user.GetBarrierAsync("meet");
        NamedBucket bucket = await user.GetBucketAsync("pail");
        await toUser.WriteAsync(7);
        Action blocking = call switch
        {
            "Read" => () => input.Read(),
            "Write" => () => output.Write(1),
            "Sync" => barrier.Sync,
            "Fall" => bucket.Fall,
            "Flush" => () => bucket.Flush(),
            _ => () => user.GetBucket("pail"),
        };

        var parallel = new Parallel();
        parallel.AddProcess(async _ =>
        {
            await Task.Yield();
            blocking();
        });
        Task run = parallel.RunAsync();
        await Assert.ThrowsAnyAsync<Exception>(() => run);

        var error = Assert.IsType<InvalidOperationException>(Assert.Single(run.Exception!.InnerExceptions));
        Assert.Contains("would block a thread-pool thread", error.Message, StringComparison.Ordinal);
        Assert.Contains($"'await {asyncTwin}'", error.Message, StringComparison.Ordinal);

        // Refused before anything was taken: the buffered value is still there.
        Assert.Equal(7, await input.ReadAsync());
    }
}
