using System;
using System.Buffers;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;
using Google.Protobuf;
using Grpc.Core;

namespace CspNet.Remote.Internal.Client;

/// <summary>One operation sent to a home and not yet answered; completed exactly once.</summary>
/// <remarks>
/// The parts of a value it receives may live in pooled arrays (<see cref="RentedBuffer"/>). They
/// are returned by whoever ends up with them: the reader of the value (<see cref="Completion.ReleaseValue"/>,
/// <see cref="ReleaseReserved"/>), or this operation when no one will read them (an answer that
/// carries no value for it, a failure, parts arriving after it ended). The link's reader adds parts
/// while a failure may end the operation from another thread: both happen under a lock (the private
/// completion source's, saving an object per operation).
/// </remarks>
internal sealed class PendingOp
{
    private readonly TaskCompletionSource<Completion> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly long _maxValueSize;
    private readonly bool _reads;
    private readonly TaskCompletionSource<ReadOnlySequence<byte>>? _reserved;
    private ValueAssembler? _chunks;
    private ValueAssembler? _reservedParts;
    private bool _ended;

    /// <param name="id">The op_id.</param>
    /// <param name="maxValueSize">The largest value accepted.</param>
    /// <param name="reserves">A reservation: <see cref="Reserved"/> completes with the value set aside.</param>
    /// <param name="reads">The caller reads the value of the answer (a plain read): only then is it kept.</param>
    internal PendingOp(ulong id, long maxValueSize, bool reserves, bool reads = false)
    {
        Id = id;
        _maxValueSize = maxValueSize;
        _reads = reads;
        if (reserves)
        {
            _reserved = new TaskCompletionSource<ReadOnlySequence<byte>>(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>For a watch: called (on the link's reader) when the home sends Ready.</summary>
    internal Action? OnReady { get; set; }

    /// <summary>
    /// For a reservation: completes with the value when the home sends Reserved (before Completed,
    /// which then waits for Settle). Its reader calls <see cref="ReleaseReserved"/> once decoded.
    /// </summary>
    internal Task<ReadOnlySequence<byte>> Reserved => _reserved!.Task;

    internal ulong Id { get; }

    /// <summary>A write whose bytes went on the bulk lane: an ABORTED answer means send them again on the link.</summary>
    internal bool ViaLane { get; set; }

    internal Task<Completion> Task => _done.Task;

    /// <summary>Adds a part of the value; false if it makes the value too large. Takes <paramref name="rented"/> in every case.</summary>
    internal bool AddChunk(ByteString data, RentedBuffer? rented)
    {
        lock (_done)
        {
            if (_ended)
            {
                rented?.Return();
                return true;
            }

            return (_chunks ??= new ValueAssembler(_maxValueSize)).TryAdd(data, rented);
        }
    }

    /// <summary>The value set aside arrives; takes <paramref name="rented"/>, the array of its last part.</summary>
    internal void SetReserved(ByteString last, RentedBuffer? rented)
    {
        ReadOnlySequence<byte> value;
        lock (_done)
        {
            ValueAssembler? parts = _chunks;
            _chunks = null;
            if (_ended || _reserved is null || _reservedParts is not null || _reserved.Task.IsCompleted)
            {
                // No reader will look at it (the operation ended, or this is not the first value).
                parts?.Release();
                rented?.Return();
                return;
            }

            value = ValueAssembler.Complete(parts, last);
            _reservedParts = Own(parts, rented);
        }

        _reserved.TrySetResult(value);
    }

    /// <summary>Returns the pooled arrays of the reserved value: called once it is decoded.</summary>
    internal void ReleaseReserved()
    {
        lock (_done)
        {
            _reservedParts?.Release();
            _reservedParts = null;
        }
    }

    /// <summary>For a plain write: the home placed it with one of the end's credits (link.proto, Completed.credit_used).</summary>
    internal bool CreditUsed { get; private set; }

    /// <summary>The home's answer; takes <paramref name="rented"/>, the array of the last part of its value.</summary>
    internal void Complete(Completed completed, RentedBuffer? rented)
    {
        CreditUsed = completed.CreditUsed;
        ReadOnlySequence<byte> value = default;
        ValueAssembler? parts;
        lock (_done)
        {
            parts = _chunks;
            _chunks = null;
            if (!_ended && _reads && completed.Outcome == Outcome.Ok)
            {
                value = ValueAssembler.Complete(parts, completed.Data);
                parts = Own(parts, rented);
            }
            else
            {
                parts?.Release();
                rented?.Return();
                parts = null;
            }

            _ended = true;
        }

        _done.TrySetResult(new Completion(completed.Outcome, (StatusCode)completed.Status, completed.Message, completed.Count, value, null, parts));
    }

    /// <param name="failure">What ended the operation.</param>
    /// <param name="unsent">The link had failed before the operation was sent: the home never saw it.</param>
    internal void Fail(Exception failure, bool unsent = false)
    {
        lock (_done)
        {
            _ended = true;
            _chunks?.Release();
            _chunks = null;
        }

        _done.TrySetResult(new Completion(Outcome.Error, StatusCode.Unavailable, failure.Message, 0, default, failure, Unsent: unsent));
    }

    /// <summary>The assembler that owns every pooled array of the value (one is made for a single pooled part).</summary>
    private ValueAssembler? Own(ValueAssembler? parts, RentedBuffer? rented)
    {
        if (rented is not null)
        {
            (parts ??= new ValueAssembler(_maxValueSize)).Keep(rented);
        }

        return parts;
    }
}
