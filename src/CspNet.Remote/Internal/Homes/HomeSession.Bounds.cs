using System;
using System.Threading;
using CspNet.Remote.Protocol;
using Grpc.Core;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// What one client program can make this program hold over its stream, bounded
/// (<see cref="CspNodeOptions.MaxOperationsPerLink"/>, <see cref="CspNodeOptions.MaxBytesPerLink"/>):
/// an operation beyond a bound is answered RESOURCE_EXHAUSTED and the stream serves on, so a
/// client that floods gets its own operations refused and no one else's.
/// </summary>
internal sealed partial class HomeSession
{
    private int _runningCount;  // operations in _running: the loop adds, completions remove
    private long _heldBytes;    // encoded bytes of values whose writes are running (loop and completions)
    private long _assemblyBytes; // bytes of values in assembly (chunks come, Write not yet): the loop's alone

    private long MaxBytes => Math.Max(_node.Options.MaxBytesPerLink, _node.Options.MaxValueSize);

    /// <summary>Refuses the operation if the stream has as many running as it may: true if it was answered.</summary>
    private bool RefusedOverOperations(ulong opId)
    {
        int limit = _node.Options.MaxOperationsPerLink;
        if (Volatile.Read(ref _runningCount) < limit)
        {
            return false;
        }

        Complete(opId, new OpResult(Outcome.Error, StatusCode.ResourceExhausted, $"This program already runs {limit:N0} operations for yours on {_node.ProgramLabel} (CspNodeOptions.MaxOperationsPerLink there): wait for some to finish, or raise the limit at the home."));
        return true;
    }

    /// <summary>
    /// Counts a running write's value; false (and nothing counted) if the stream's values would
    /// then exceed the bound. A value alone is always admitted: MaxValueSize bounds it already.
    /// </summary>
    private bool TryHoldBytes(long bytes)
    {
        long after = Interlocked.Add(ref _heldBytes, bytes);
        if (after > bytes && after + _assemblyBytes > MaxBytes)
        {
            Interlocked.Add(ref _heldBytes, -bytes);
            return false;
        }

        return true;
    }

    private void ReleaseBytes(long bytes) => Interlocked.Add(ref _heldBytes, -bytes);

    private OpResult HeldBytesRefused(long bytes) => new(
        Outcome.Error,
        StatusCode.ResourceExhausted,
        $"A value of {bytes:N0} bytes was refused: values of yours waiting for readers on {_node.ProgramLabel} already hold {Volatile.Read(ref _heldBytes):N0} bytes (CspNodeOptions.MaxBytesPerLink there is {_node.Options.MaxBytesPerLink:N0}). Nothing was written: write fewer large values at once, or raise the limit at the home.");

    /// <summary>Counts bytes a value in assembly grew by; a stream with more in assembly than the bound is ended.</summary>
    private void AddAssemblyBytes(long bytes)
    {
        _assemblyBytes += bytes;
        if (_assemblyBytes > MaxBytes)
        {
            // A client sends a value's parts and then its Write: this much unfinished is not a
            // client writing, it is one holding this program's memory.
            throw new RpcException(new Status(StatusCode.ResourceExhausted, $"More than {MaxBytes:N0} bytes of values are in assembly on this stream (CspNodeOptions.MaxBytesPerLink): each value's chunks must be followed by its Write."));
        }
    }
}
