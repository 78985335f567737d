using System.Diagnostics;
using CspNet.Internal.Scheduling;

namespace CspNet.Internal;

/// <summary>The state of a <see cref="Bucket"/>: the processes held until the next flush.</summary>
internal sealed class BucketCore : SyncPoint
{
    protected override string Kind => "Bucket";

    protected override string BlockingCall => "Fall()";

    protected override string AsyncTwin => "FallAsync()";

    internal int Holding
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

    /// <summary>State for the debugger, read without the lock (see <see cref="BarrierCore.DebuggerDisplay"/>).</summary>
    internal string DebuggerDisplay => $"Holding = {ParkedCount}, Poisoned = {Poisoned}";

    internal int Flush()
    {
        Waiter<bool>? released;
        ControlPoint.BeforeLock(Gate);
        lock (Gate)
        {
            released = ReleaseAllLocked();
        }

        return WakeAll(released);
    }

    protected override bool ArriveLocked(out Waiter<bool>? released)
    {
        Debug.Assert(Gate.IsHeldByCurrentThread, "Called under the gate.");
        released = null;
        return true;
    }
}
