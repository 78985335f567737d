using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Tasks;
using Grpc.Core;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// Serializes the frames of many senders onto one gRPC stream, which takes one write at a time.
/// A frame sent while no write is in progress is written at once, on the sender's thread; frames
/// sent while one is in progress queue behind it and are written, in order, by whoever finishes
/// the write in progress.
/// </summary>
/// <remarks>
/// A queue drained by a dedicated loop (a <c>Channel</c> and a pump) costs a ThreadPool hop per
/// frame when the stream is idle: the loop's wake-up is queued as a work item. For a synchronous
/// remote write that hop is on the critical path of every answer (Completed), so the idle case
/// writes inline. A write that does not complete synchronously is finished, and the queue behind it
/// drained, by its continuation; the sender never waits for it. A frame queued behind an inline
/// write is drained by a ThreadPool work item instead of the sender, so a sender (which may hold a
/// construct's lock while it sends a Credit) writes at most its own frame.
/// Frames already queued behind the one being written go out in the same flush.
/// After a write fails, the stream is gone: later frames are dropped.
/// <para>
/// The queue is unbounded (a sender never waits), so the producer of the frames bounds it: it
/// asks <see cref="WhenRoom"/> before it starts more work, and waits while more than the limit
/// are queued, until half of them have been written (the stream's reader is slow or not reading).
/// </para>
/// </remarks>
/// <typeparam name="T">The message type of the stream.</typeparam>
internal sealed class InlineStreamWriter<T>
    where T : class
{
    private readonly IAsyncStreamWriter<T> _output;
    private readonly CancellationToken _cancellationToken;
    private readonly Action<T>? _written;
    private readonly int _limit;
    private readonly Lock _lock = new();
    private readonly Queue<T> _queue = new();
    private bool _writing; // a write is in progress or about to start: others queue behind it
    private bool _closed; // no more frames are accepted (completed, or the stream failed)
    private TaskCompletionSource? _drained; // set by CompleteAsync while a write is in progress
    private TaskCompletionSource? _room; // set by WhenRoom while more than the limit are queued
    private TaskCompletionSource? _idle; // set by WhenWritten while a write is in progress

    /// <param name="output">The stream.</param>
    /// <param name="cancellationToken">Cancels writes in progress: the stream is ending.</param>
    /// <param name="written">Called with each frame once gRPC has written it (it no longer reads the frame's data); not called for frames dropped after a failure.</param>
    /// <param name="limit">How many queued frames make <see cref="WhenRoom"/> wait.</param>
    internal InlineStreamWriter(IAsyncStreamWriter<T> output, CancellationToken cancellationToken, Action<T>? written = null, int limit = int.MaxValue)
    {
        _output = output;
        _cancellationToken = cancellationToken;
        _written = written;
        _limit = limit;
    }

    /// <summary>Frames waiting behind the write in progress.</summary>
    internal int Queued
    {
        get
        {
            lock (_lock)
            {
                return _queue.Count;
            }
        }
    }

    /// <summary>The first failure of a write, if any: the frames after it were dropped.</summary>
    internal Exception? Failure { get; private set; }

    /// <summary>Writes <paramref name="frame"/> now if the stream is idle, or queues it behind the write in progress. Never waits.</summary>
    /// <returns>False if the writer is closed and the frame was dropped.</returns>
    internal bool Send(T frame)
    {
        lock (_lock)
        {
            if (_closed)
            {
                return false;
            }

            if (_writing)
            {
                _queue.Enqueue(frame);
                return true;
            }

            _writing = true;
        }

        Task write = Write(frame, moreWaiting: false);
        if (!write.IsCompleted)
        {
            _ = FinishAsync(write, frame);
        }
        else if (Finished(write, frame) && !TryStop())
        {
            // Frames came in during the inline write: drain them off the sender's thread.
            ThreadPool.UnsafeQueueUserWorkItem(static self => _ = self.DrainAsync(), this, preferLocal: false);
        }

        return true;
    }

    /// <summary>
    /// Null while at most the limit of frames are queued; otherwise a task that completes once at
    /// most half the limit are (or the stream failed, or is completing). For one producer at a time.
    /// </summary>
    internal Task? WhenRoom()
    {
        lock (_lock)
        {
            if (_queue.Count <= _limit || _closed)
            {
                return null;
            }

            _room ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            return _room.Task;
        }
    }

    /// <summary>Completes when the frames accepted so far are written (or the stream failed); accepts more meanwhile.</summary>
    internal Task WhenWritten()
    {
        lock (_lock)
        {
            return !_writing ? Task.CompletedTask : (_idle ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
        }
    }

    /// <summary>Accepts no more frames; completes when the frames already accepted are written (or the stream failed).</summary>
    internal Task CompleteAsync()
    {
        TaskCompletionSource? room;
        Task drained;
        lock (_lock)
        {
            _closed = true;
            room = _room;
            _room = null;
            drained = !_writing ? Task.CompletedTask : (_drained ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
        }

        room?.TrySetResult(); // nothing more will be sent: a producer waiting for room goes on, to end
        return drained;
    }

    private Task Write(T frame, bool moreWaiting)
    {
        try
        {
            // Frames already queued behind this one go out in the same flush.
            _output.WriteOptions = NodeTransport.FlushUnless(moreWaiting);
            return _output.WriteAsync(frame, _cancellationToken);
        }
#pragma warning disable CA1031 // Any failure to write means the stream is gone; Finished records it.
        catch (Exception e)
#pragma warning restore CA1031
        {
            return Task.FromException(e);
        }
    }

    private async Task FinishAsync(Task write, T frame)
    {
        await write.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        if (Finished(write, frame) && !TryStop())
        {
            await DrainAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Writes the queued frames in order until the queue is empty; the caller holds the write turn.</summary>
    private async Task DrainAsync()
    {
        while (TryNext(out T? frame, out bool moreWaiting))
        {
            Task write = Write(frame, moreWaiting);
            await write.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (!Finished(write, frame))
            {
                return;
            }
        }
    }

    /// <summary>After a write: true if it succeeded; otherwise the stream is gone, and every queued and later frame is dropped.</summary>
    private bool Finished(Task write, T frame)
    {
        if (write.IsCompletedSuccessfully)
        {
            _written?.Invoke(frame);
            return true;
        }

        TaskCompletionSource? drained, room, idle;
        lock (_lock)
        {
            Failure ??= write.Exception?.InnerException ?? new OperationCanceledException(_cancellationToken);
            _closed = true;
            _queue.Clear();
            _writing = false;
            drained = _drained;
            room = _room;
            _room = null;
            idle = _idle;
            _idle = null;
        }

        drained?.TrySetResult();
        idle?.TrySetResult();
        room?.TrySetResult();
        return false;
    }

    /// <summary>Gives up the write turn if nothing is queued; false if frames wait (the caller keeps the turn and drains them).</summary>
    private bool TryStop()
    {
        TaskCompletionSource? drained, idle;
        lock (_lock)
        {
            if (_queue.Count > 0)
            {
                return false;
            }

            _writing = false;
            drained = _drained;
            idle = _idle;
            _idle = null;
        }

        drained?.TrySetResult();
        idle?.TrySetResult();
        return true;
    }

    private bool TryNext([NotNullWhen(true)] out T? frame, out bool moreWaiting)
    {
        TaskCompletionSource? drained = null, room, idle = null;
        lock (_lock)
        {
            AssertInvariants();
            if (_queue.TryDequeue(out frame))
            {
                moreWaiting = _queue.Count > 0;
                room = _queue.Count <= _limit / 2 ? _room : null;
                if (room is not null)
                {
                    _room = null;
                }
            }
            else
            {
                _writing = false;
                drained = _drained;
                idle = _idle;
                _idle = null;
                room = _room; // empty: any waiter has room
                _room = null;
                moreWaiting = false;
            }
        }

        // Completed outside the lock: the waiter's continuation is asynchronous anyway, but a
        // completion never runs user code under a lock.
        room?.TrySetResult();
        if (frame is not null)
        {
            return true;
        }

        drained?.TrySetResult();
        idle?.TrySetResult();
        return false;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "The state is read under the lock.");
        Debug.Assert(_writing, "Only the holder of the write turn drains the queue.");
        Debug.Assert(Failure is null || _queue.Count == 0, "A failed stream queues nothing.");
    }
}
