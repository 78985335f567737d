using System;
using System.Collections.Generic;
using System.Threading;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// The cancellation of one process that a <see cref="DistParallel"/> runs (on a pool's worker or on
/// a local thread): its token, and the named channel ends, barriers and buckets it got, which
/// cancelling poisons so that a process blocked on one of them ends.
/// </summary>
/// <remarks>
/// Ambient (<see cref="Current"/>) on the process's own thread and in what that thread awaits, so
/// that <see cref="CspNode"/>'s getters can hand it every end they give out. It flows with the
/// execution context, so the processes of a nested <see cref="Parallel"/> and the threads and tasks
/// the process starts are covered; work started with the flow suppressed is not.
/// </remarks>
internal sealed class ProcessCancellation : IDisposable
{
    private static readonly AsyncLocal<ProcessCancellation?> Ambient = new();

    private readonly CancellationTokenSource _source = new();
    private readonly Lock _lock = new();
    private List<IPoisonable>? _held = [];
    private bool _cancelled;

    /// <summary>The cancellation of the DistParallel process running here, or null.</summary>
    internal static ProcessCancellation? Current => Ambient.Value;

    /// <summary>Cancelled when the run that started the process is cancelled.</summary>
    internal CancellationToken Token => _source.Token;

    internal bool IsCancelled
    {
        get
        {
            lock (_lock)
            {
                return _cancelled;
            }
        }
    }

    /// <summary>Makes this the ambient cancellation of the calling thread until the scope is disposed.</summary>
    internal Scope Use()
    {
        ProcessCancellation? previous = Ambient.Value;
        Ambient.Value = this;
        return new Scope(previous);
    }

    /// <summary>Remembers <paramref name="end"/> to poison it on cancellation; poisons it now if already cancelled.</summary>
    internal void Track(IPoisonable? end)
    {
        if (end is null)
        {
            return;
        }

        lock (_lock)
        {
            if (_held is not null)
            {
                _held.Add(end);
                return;
            }

            if (!_cancelled)
            {
                return; // The process has ended.
            }
        }

        PoisonQuietly(end);
    }

    /// <summary>Cancels the token, then poisons every end the process got. Idempotent.</summary>
    internal void Cancel()
    {
        List<IPoisonable>? held;
        lock (_lock)
        {
            held = _held;
            _held = null;
            _cancelled |= held is not null;
        }

        if (held is null)
        {
            return;
        }

        // The token first: a process that watches it may end on its own before its channels go.
        try
        {
            _source.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // The process ended and its run let go of it meanwhile: nothing left to cancel.
            return;
        }

        foreach (IPoisonable end in held)
        {
            PoisonQuietly(end);
        }
    }

    /// <summary>Called when the process has ended: a later <see cref="Cancel"/> does nothing.</summary>
    public void Dispose()
    {
        lock (_lock)
        {
            _held = null;
        }

        _source.Dispose();
    }

    private static void PoisonQuietly(IPoisonable end)
    {
        try
        {
            end.Poison();
        }
#pragma warning disable CA1031 // An end whose program or link is gone needs no poison; cancelling goes on with the others.
        catch (Exception)
#pragma warning restore CA1031
        {
        }
    }

    /// <summary>Restores the previous ambient cancellation.</summary>
    internal readonly struct Scope(ProcessCancellation? previous) : IDisposable
    {
        public void Dispose() => Ambient.Value = previous;
    }
}
