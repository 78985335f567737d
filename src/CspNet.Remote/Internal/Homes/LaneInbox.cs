using System;
using System.Buffers;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// The values one Link stream's bulk lane has brought and the writes waiting for them, by op_id.
/// </summary>
/// <remarks>
/// A payload and its Write travel on different connections, so either may come first: a payload
/// waits here for its Write, a Write (<see cref="TakeAsync"/>) for its payload. Bounded: the bytes
/// held for Writes that have not come are at most <see cref="MaxPendingBytes"/> (past that the lane
/// is dropped, and its writers send on the link), and a Write waits for its payload at most the
/// timeout it is given. Once the lane's connection ends, a Write whose payload is not here has its
/// answer at once: it never comes.
/// </remarks>
internal sealed class LaneInbox(long maxPendingBytes)
{
    private readonly Lock _gate = new();
    private readonly Dictionary<ulong, LanePayload> _arrived = [];
    private readonly Dictionary<ulong, TaskCompletionSource<LanePayload>> _waiting = [];
    private long _pendingBytes;
    private bool _ended;
    private int _connections;

    /// <summary>Whether the stream's client may mark payloads as <c>byte[]</c> values (both Hellos said lane_bytes).</summary>
    internal bool TakesBytesValues { get; init; }

    /// <summary>The most bytes held for Writes that have not come.</summary>
    internal long MaxPendingBytes => maxPendingBytes;

    /// <summary>Claims the inbox for a connection; false if one already had it (a lane is opened once).</summary>
    internal bool TryAttach() => Interlocked.Increment(ref _connections) == 1;

    /// <summary>
    /// A payload in full; false when it breaks the lane's rules (an op_id seen before, or more bytes
    /// pending than allowed): the caller drops the lane and gives the payload back.
    /// </summary>
    internal bool Deliver(ulong opId, LanePayload payload)
    {
        int length = payload.Length;
        TaskCompletionSource<LanePayload>? waiter;
        lock (_gate)
        {
            if (_ended || _arrived.ContainsKey(opId))
            {
                return false;
            }

            if (!_waiting.Remove(opId, out waiter))
            {
                if (_pendingBytes + length > maxPendingBytes)
                {
                    return false;
                }

                _pendingBytes += length;
                _arrived.Add(opId, payload);
                return true;
            }
        }

        if (!waiter.TrySetResult(payload))
        {
            // The Write stopped waiting (cancelled, timed out) in the meantime: nobody takes it.
            payload.Return();
        }

        return true;
    }

    /// <summary>
    /// The payload of <paramref name="opId"/> (its pooled array the caller returns), or one with no
    /// array if it did not come in time or cannot come any more. Cancellation throws.
    /// </summary>
    internal async Task<LanePayload> TakeAsync(ulong opId, TimeSpan timeout, CancellationToken cancellationToken)
    {
        TaskCompletionSource<LanePayload> waiter;
        lock (_gate)
        {
            if (_arrived.Remove(opId, out LanePayload payload))
            {
                _pendingBytes -= payload.Length;
                return payload;
            }

            if (_ended || _waiting.ContainsKey(opId))
            {
                return default;
            }

            waiter = new TaskCompletionSource<LanePayload>(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiting.Add(opId, waiter);
        }

        try
        {
            return await waiter.Task.WaitAsync(timeout, cancellationToken).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            Abandon(opId, waiter);
            return default;
        }
        catch (OperationCanceledException)
        {
            Abandon(opId, waiter);
            throw;
        }
    }

    /// <summary>The lane's connection ended (or the stream did): no more payloads come.</summary>
    internal void End(bool releaseArrived)
    {
        List<TaskCompletionSource<LanePayload>> waiters;
        List<LanePayload> released = [];
        lock (_gate)
        {
            _ended = true;
            waiters = [.. _waiting.Values];
            _waiting.Clear();
            if (releaseArrived)
            {
                released.AddRange(_arrived.Values);
                _arrived.Clear();
                _pendingBytes = 0;
            }
        }

        foreach (TaskCompletionSource<LanePayload> waiter in waiters)
        {
            waiter.TrySetResult(default);
        }

        foreach (LanePayload payload in released)
        {
            payload.Return();
        }
    }

    private void Abandon(ulong opId, TaskCompletionSource<LanePayload> waiter)
    {
        lock (_gate)
        {
            if (_waiting.TryGetValue(opId, out TaskCompletionSource<LanePayload>? current) && current == waiter)
            {
                _waiting.Remove(opId);
            }
        }

        // Delivered between the timeout and the lock: give the array back.
        if (!waiter.TrySetResult(default))
        {
            _ = ReturnLateAsync(waiter.Task);
        }
    }

    /// <summary>A payload delivered after its Write stopped waiting (the task has completed: this does not wait).</summary>
    private static async Task ReturnLateAsync(Task<LanePayload> delivered) => (await delivered.ConfigureAwait(false)).Return();
}

/// <summary>
/// A value that came on a bulk lane (none if <see cref="Array"/> is null): its encoding in the first
/// <see cref="Length"/> bytes of a pooled array, or, when <see cref="Received"/>, a <c>byte[]</c>
/// value received straight into <see cref="Array"/>, which becomes the reader's value (its
/// encoding, the presence byte and the array, is <see cref="Length"/> bytes).
/// </summary>
internal readonly record struct LanePayload(byte[]? Array, int Length, bool Received = false)
{
    /// <summary>A <c>byte[]</c> value received into its own array.</summary>
    internal static LanePayload ReceivedBytes(byte[] value) => new(value, value.Length + 1, Received: true);

    /// <summary>The value's encoding, for the end's codec (a <c>byte[]</c> codec takes a received array as it is).</summary>
    internal ReadOnlySequence<byte> Encoding => Received
        ? Serialization.ReceivedBytes.Encoding(Array!)
        : new ReadOnlySequence<byte>(Array!, 0, Length);

    /// <summary>A pooled array back to the pool (nothing if there is none; a received value's array is the GC's).</summary>
    internal void Return()
    {
        if (!Received && Array is { } array)
        {
            ArrayPool<byte>.Shared.Return(array);
        }
    }
}
