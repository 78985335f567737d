using System;
using System.Diagnostics;
using System.Threading;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>The state of a <see cref="Barrier"/>: enrolled processes and the current phase.</summary>
internal sealed class BarrierCore : SyncPoint
{
    private int _enrolled;

    internal BarrierCore(int enrolled) => _enrolled = enrolled;

    protected override string Kind => "Barrier";

    protected override string BlockingCall => "Sync()";

    protected override string AsyncTwin => "SyncAsync()";

    internal int Enrolled
    {
        get
        {
            ControlPoint.BeforeLock(Gate);
            lock (Gate)
            {
                return _enrolled;
            }
        }
    }

    /// <summary>
    /// State for the debugger, read without the lock: a debugger evaluates it while every thread
    /// is frozen, perhaps one that holds the lock. The numbers may be a moment apart.
    /// </summary>
    internal string DebuggerDisplay => $"Enrolled = {Volatile.Read(ref _enrolled)}, Waiting = {ParkedCount}, Poisoned = {Poisoned}";

    internal int Waiting
    {
        get
        {
            ControlPoint.BeforeLock(Gate);
            lock (Gate)
            {
                return ParkedCount;
            }
        }
    }

    internal void Enroll()
    {
        ControlPoint.BeforeLock(Gate);
        lock (Gate)
        {
            ThrowIfPoisonedLocked();
            _enrolled++;
        }
    }

    internal void Resign()
    {
        Waiter<bool>? released = null;
        ControlPoint.BeforeLock(Gate);
        lock (Gate)
        {
            if (_enrolled == 0)
            {
                throw new InvalidOperationException("Resign was called on a barrier with no enrolled process; every Resign must match an Enroll (or the constructor's count).");
            }

            _enrolled--;

            // The others may have been waiting only for the one that left.
            if (ParkedCount > 0 && ParkedCount == _enrolled)
            {
                released = ReleaseAllLocked();
            }
        }

        WakeAll(released);
    }

    protected override bool ArriveLocked(out Waiter<bool>? released)
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "Called under the gate.");
        released = null;
        if (ParkedCount >= _enrolled)
        {
            throw new InvalidOperationException(
                "A process synced on a barrier with 0 enrolled processes. " +
                "Enroll every process that syncs (constructor count or Enroll()), and Resign when a process stops syncing.");
        }

        if (ParkedCount + 1 == _enrolled)
        {
            // The last one in: release the phase and pass.
            released = ReleaseAllLocked();
            return false;
        }

        return true;
    }
}
