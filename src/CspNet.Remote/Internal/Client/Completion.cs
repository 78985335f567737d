using System;
using System.Buffers;
using System.IO;
using System.Threading;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;
using Grpc.Core;

namespace CspNet.Remote.Internal.Client;

/// <summary>What the home answered for one operation (or that the link was lost first).</summary>
/// <remarks>
/// A read's <see cref="Value"/> may live in pooled arrays (<see cref="Parts"/>): the reader decodes
/// it, then calls <see cref="ReleaseValue"/>, and reads it no more.
/// </remarks>
internal readonly record struct Completion(Outcome Outcome, StatusCode Status, string Message, int Count, ReadOnlySequence<byte> Value, Exception? Lost, ValueAssembler? Parts = null, bool Unsent = false)
{
    /// <summary>
    /// Whether the home did not perform the operation because it moved, or could not have (the
    /// link had failed before it was sent): an end that follows moves sends it again at the home
    /// the NameServer names now (<see cref="EndRoute"/>).
    /// </summary>
    internal bool MayFollow => Lost is null ? Outcome == Outcome.Moved : Unsent && Lost is PeerLostException;

    /// <summary>Returns the pooled arrays <see cref="Value"/> lives in, if any; <see cref="Value"/> is unreadable afterwards.</summary>
    internal void ReleaseValue() => Parts?.Release();

    /// <summary>Throws what a local operation would have thrown for this outcome.</summary>
    internal void ThrowIfFailed(string what, CancellationToken cancellationToken)
    {
        if (Lost is PeerLostException lost)
        {
            // A new exception per operation: it names the construct, and a shared one's stack trace would be another thread's.
            throw new PeerLostException($"{what} failed. {lost.Message}", lost);
        }

        if (Lost is not null)
        {
            throw Lost;
        }

        switch (Outcome)
        {
            case Outcome.Ok:
                return;
            case Outcome.Cancelled:
                throw new OperationCanceledException($"{what} was cancelled: nothing was transferred.", cancellationToken);
            case Outcome.Poisoned:
                throw new PoisonException(Message);
            case Outcome.Moved:
                throw new PeerLostException($"{what} failed: the home moved to another program, and this end did not follow it. Nothing was transferred.");
            default:
                throw Status switch
                {
                    StatusCode.InvalidArgument => new InvalidDataException($"{what} failed at the other program: {Message}"),
                    StatusCode.Unimplemented => new NotSupportedException($"{what}: {Message}"),
                    _ => new InvalidOperationException($"{what} failed at the other program ({Status}): {Message}"),
                };
        }
    }
}
