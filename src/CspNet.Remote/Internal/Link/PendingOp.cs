using System;
using System.Buffers;
using System.Threading.Tasks;
using CspNet.Remote.Protocol;
using Google.Protobuf;
using Grpc.Core;

namespace CspNet.Remote.Internal;

/// <summary>One operation sent to a home and not yet answered; completed exactly once.</summary>
internal sealed class PendingOp
{
    private readonly TaskCompletionSource<Completion> _done = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly long _maxValueSize;
    private readonly TaskCompletionSource<ReadOnlySequence<byte>>? _reserved;
    private ValueAssembler? _chunks;

    internal PendingOp(ulong id, long maxValueSize, bool reserves)
    {
        Id = id;
        _maxValueSize = maxValueSize;
        if (reserves)
        {
            _reserved = new TaskCompletionSource<ReadOnlySequence<byte>>(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>For a watch: called (on the link's reader) when the home sends Ready.</summary>
    internal Action? OnReady { get; set; }

    /// <summary>For a reservation: completes with the value when the home sends Reserved (before Completed, which then waits for Settle).</summary>
    internal Task<ReadOnlySequence<byte>> Reserved => _reserved!.Task;

    internal ulong Id { get; }

    internal Task<Completion> Task => _done.Task;

    internal bool AddChunk(ByteString data) => (_chunks ??= new ValueAssembler(_maxValueSize)).TryAdd(data);

    internal void SetReserved(ByteString last)
    {
        ReadOnlySequence<byte> value = ValueAssembler.Complete(_chunks, last);
        _chunks = null;
        _reserved?.TrySetResult(value);
    }

    /// <summary>For a plain write: the home placed it with one of the end's credits (link.proto, Completed.credit_used).</summary>
    internal bool CreditUsed { get; private set; }

    internal void Complete(Completed completed)
    {
        CreditUsed = completed.CreditUsed;
        ReadOnlySequence<byte> value = completed.Outcome == Outcome.Ok ? ValueAssembler.Complete(_chunks, completed.Data) : default;
        _done.TrySetResult(new Completion(completed.Outcome, (StatusCode)completed.Status, completed.Message, completed.Count, value, null));
    }

    internal void Fail(Exception failure) => _done.TrySetResult(new Completion(Outcome.Error, StatusCode.Unavailable, failure.Message, 0, default, failure));
}
