using CspNet.Remote.Internal.Transport;
using Grpc.Core;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// The home's reply writer: a frame sent to an idle stream is written at once on the sender's
/// thread; frames sent during a write queue behind it and go out in order, in one flush; a failed
/// write drops the rest; completing waits for what was accepted.
/// </summary>
public sealed class InlineStreamWriterTests
{
    [Fact(Timeout = 10_000)]
    public async Task Send_StreamIdle_WritesOnTheSendersThreadBeforeReturning()
    {
        var stream = new FakeStream();
        var written = new List<string>();
        var writer = new InlineStreamWriter<string>(stream, CancellationToken.None, written.Add);

        int thread = Environment.CurrentManagedThreadId;
        Assert.True(writer.Send("a"));

        Assert.Equal(["a"], stream.Frames);
        Assert.Equal([thread], stream.Threads);
        Assert.Equal([null], stream.Options); // flushed: nothing waits behind it
        Assert.Equal(["a"], written);
        await writer.CompleteAsync();
    }

    [Fact(Timeout = 10_000)]
    public async Task Send_DuringAPendingWrite_QueuesInOrderAndFlushesOnceAtTheEnd()
    {
        var stream = new FakeStream();
        var written = new List<string>();
        var writer = new InlineStreamWriter<string>(stream, CancellationToken.None, f => { lock (written) { written.Add(f); } });
        TaskCompletionSource first = stream.HoldNext();

        writer.Send("a"); // pending: its write has not completed
        writer.Send("b");
        writer.Send("c");
        Assert.Equal(["a"], stream.Frames);
        Assert.Equal(2, writer.Queued);
        Assert.Empty(written); // gRPC may still read a's data

        Task drained = writer.CompleteAsync();
        Assert.False(drained.IsCompleted);
        Assert.False(writer.Send("late")); // completing accepts nothing more
        first.SetResult();
        await drained;

        Assert.Equal(["a", "b", "c"], stream.Frames);
        Assert.NotNull(stream.Options[1]); // b: c was queued behind it, so b is buffered
        Assert.Null(stream.Options[2]); // c: the last, flushed
        Assert.Equal(["a", "b", "c"], written);
    }

    [Fact(Timeout = 10_000)]
    public async Task Send_WriteFails_DropsQueuedAndLaterFramesAndCompletes()
    {
        var stream = new FakeStream();
        var written = new List<string>();
        var writer = new InlineStreamWriter<string>(stream, CancellationToken.None, written.Add);
        TaskCompletionSource first = stream.HoldNext();

        writer.Send("a");
        writer.Send("b");
        first.SetException(new IOException("the stream is gone"));
        Task drained = writer.CompleteAsync();
        await drained;

        Assert.False(writer.Send("c"));
        Assert.Equal(["a"], stream.Frames);
        Assert.Empty(written); // a failed frame is not reported written: its buffer is left to the collector
        Assert.IsType<IOException>(writer.Failure);
        Assert.Equal(0, writer.Queued);
    }

    [Fact(Timeout = 10_000)]
    public async Task Send_FramesQueuedBehindAnInlineWrite_AreDrainedOffTheSendersThread()
    {
        // The first write completes synchronously, but only after another sender queued a frame
        // behind it: the queued frame must still go out, and not by the first sender.
        var stream = new FakeStream();
        var writer = new InlineStreamWriter<string>(stream, CancellationToken.None);
        stream.OnWrite = frame =>
        {
            if (frame == "a")
            {
                Assert.True(Task.Run(() => writer.Send("b")).Wait(5_000)); // queues: a is being written
            }
        };

        writer.Send("a");
        await writer.CompleteAsync();

        Assert.Equal(["a", "b"], stream.Frames);
    }

    [Fact(Timeout = 10_000)]
    public async Task WhenRoom_MoreThanTheLimitQueued_WaitsUntilHalfHaveLeft()
    {
        var stream = new FakeStream();
        var writer = new InlineStreamWriter<string>(stream, CancellationToken.None, limit: 4);
        TaskCompletionSource first = stream.HoldNext();
        writer.Send("a"); // its write is pending: the rest queue
        foreach (string frame in new[] { "b", "c", "d", "e" })
        {
            writer.Send(frame);
        }

        Assert.Null(writer.WhenRoom()); // 4 queued: at the limit, not over it
        writer.Send("f");
        TaskCompletionSource second = stream.HoldNext(); // b's write will be pending too
        Task? room = writer.WhenRoom();
        Assert.NotNull(room);

        first.SetResult(); // a written; b starts, 4 left queued: more than half the limit
        await stream.Started(2);
        Assert.False(room.IsCompleted);

        second.SetResult(); // the rest go out; at 2 queued the producer may go on
        await room;
        await writer.CompleteAsync();
        Assert.Equal(["a", "b", "c", "d", "e", "f"], stream.Frames);
    }

    [Fact(Timeout = 10_000)]
    public async Task WhenRoom_StreamFails_CompletesSoTheProducerCanEnd()
    {
        var stream = new FakeStream();
        var writer = new InlineStreamWriter<string>(stream, CancellationToken.None, limit: 1);
        TaskCompletionSource first = stream.HoldNext();
        writer.Send("a");
        writer.Send("b");
        writer.Send("c");
        Task? room = writer.WhenRoom();
        Assert.NotNull(room);

        first.SetException(new IOException("the stream is gone"));

        await room;
        Assert.Equal(0, writer.Queued);
    }

    [Fact(Timeout = 10_000)]
    public async Task CompleteAsync_Idle_CompletesAtOnceAndRefusesLaterFrames()
    {
        var stream = new FakeStream();
        var writer = new InlineStreamWriter<string>(stream, CancellationToken.None);

        await writer.CompleteAsync();

        Assert.False(writer.Send("a"));
        Assert.Empty(stream.Frames);
    }

    /// <summary>A stream that records writes; a write held with <see cref="HoldNext"/> completes when the test says.</summary>
    private sealed class FakeStream : IAsyncStreamWriter<string>
    {
        private TaskCompletionSource? _hold;
        private (int Count, TaskCompletionSource Reached)? _started;

        internal List<string> Frames { get; } = [];

        internal List<int> Threads { get; } = [];

        internal List<WriteOptions?> Options { get; } = [];

        internal Action<string>? OnWrite { get; set; }

        public WriteOptions? WriteOptions { get; set; }

        internal TaskCompletionSource HoldNext() => _hold = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <summary>Completes when <paramref name="count"/> writes have started.</summary>
        internal Task Started(int count)
        {
            lock (Frames)
            {
                if (Frames.Count >= count)
                {
                    return Task.CompletedTask;
                }

                _started = (count, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
                return _started.Value.Reached.Task;
            }
        }

        public Task WriteAsync(string message)
        {
            lock (Frames)
            {
                Frames.Add(message);
                Threads.Add(Environment.CurrentManagedThreadId);
                Options.Add(WriteOptions);
                if (_started is { } started && Frames.Count >= started.Count)
                {
                    started.Reached.TrySetResult();
                }
            }

            OnWrite?.Invoke(message);
            TaskCompletionSource? hold = _hold;
            _hold = null;
            return hold?.Task ?? Task.CompletedTask;
        }
    }
}
