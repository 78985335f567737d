using System;
using System.Diagnostics.CodeAnalysis;

namespace CspNet.Internal;

/// <summary>
/// Builds and throws the exceptions the library raises, with messages that say what to do. The
/// <c>Throw*</c> methods keep the throwing code out of hot methods; the <c>Create*</c> methods are
/// for the places that hand an exception to another party (a parked waiter, a faulted task).
/// </summary>
internal static class ThrowHelper
{
    [DoesNotReturn]
    internal static void ThrowPoisoned(string kind) => throw CreatePoisoned(kind);

    [DoesNotReturn]
    internal static void ThrowSharedOneEnd(string kind, bool isReader) => throw CreateSharedOneEnd(kind, isReader);

    [DoesNotReturn]
    internal static void ThrowEndInOtherSelection(string kind) =>
        throw new InvalidOperationException(
            $"This end of {kind} is a guard of another Alternative that is selecting right now. " +
            "A channel end belongs to one process: give each process its own end (CreateIn() or CreateOut() on a shared channel), " +
            "and do not run two selections over the same end at once.");

    [DoesNotReturn]
    internal static void ThrowNoOffer(string kind) =>
        throw new InvalidOperationException(
            $"An output guard of {kind} takes part in a selection without a value to offer. " +
            "Call Offer(value) on the end before each selection that may choose it (an offer is written at most once), " +
            "or pass a false precondition for it.");

    [DoesNotReturn]
    internal static void ThrowNeverReady() =>
        throw new InvalidOperationException(
            "No guard of this selection can ever become ready (every precondition is false, or the only guards are timers with no timeout), " +
            "so it would wait forever. Set a timeout (RelativeTimeOut/AbsoluteTimeOut) or enable another guard.");

    [DoesNotReturn]
    internal static void ThrowAlreadySelecting() =>
        throw new InvalidOperationException("This Alternative is already selecting. An Alternative belongs to one process; give each process its own.");

    internal static PoisonException CreatePoisoned(string kind) =>
        new($"{kind} has been poisoned: no further communication is possible on it. " +
            "Catch PoisonException to shut the process down, and poison its other channels to pass the shutdown on.");

    internal static InvalidOperationException CreateSharedOneEnd(string kind, bool isReader) =>
        new(isReader
            ? $"Two processes are reading from the single reading end of {kind} at the same time. " +
              "Use a One2AnyChannel or Any2AnyChannel if several processes must read: only those share their reading end."
            : $"Two processes are writing to the single writing end of {kind} at the same time. " +
              "Use an Any2OneChannel or Any2AnyChannel if several processes must write.");
}
