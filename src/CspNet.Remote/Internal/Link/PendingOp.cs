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
    private ValueAssembler? _chunks;

    internal PendingOp(ulong id, long maxValueSize)
    {
        Id = id;
        _maxValueSize = maxValueSize;
    }

    internal ulong Id { get; }

    internal Task<Completion> Task => _done.Task;

    internal bool AddChunk(ByteString data) => (_chunks ??= new ValueAssembler(_maxValueSize)).TryAdd(data);

    internal void Complete(Completed completed)
    {
        ReadOnlySequence<byte> value = completed.Outcome == Outcome.Ok ? ValueAssembler.Complete(_chunks, completed.Data) : default;
        _done.TrySetResult(new Completion(completed.Outcome, (StatusCode)completed.Status, completed.Message, completed.Count, value, null));
    }

    internal void Fail(Exception failure) => _done.TrySetResult(new Completion(Outcome.Error, StatusCode.Unavailable, failure.Message, 0, default, failure));
}
