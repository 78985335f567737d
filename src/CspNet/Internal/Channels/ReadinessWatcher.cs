using System;
using System.Diagnostics;
using System.Threading.Tasks;

namespace CspNet.Internal;

/// <summary>
/// A one-shot watch parked in a channel's readers' queue (a writer that tries to pair with it, an
/// alternation that puts a value in the buffer, or the poison fires it) or in its writers' queue
/// (a take that frees room, a release of reservations, or the poison fires it). Nobody can claim
/// it, so it never takes or gives a value.
/// </summary>
internal sealed class ReadinessWatcher<T> : Waiter<T>
{
    internal override Exception? Error { get; set; }

    private readonly TaskCompletionSource _fired = new(TaskCreationOptions.RunContinuationsAsynchronously);

    internal Task Fired => _fired.Task;

    // Never null, and never any alternation's: plain-only paths (DequeuePlain, HasPlain) pass it by.
    internal override object? Selection => this;

    internal override bool IsWatcher => true;

    internal override bool TryClaim()
    {
        _fired.TrySetResult();
        return false;
    }

    internal override void SignalSelection() => _fired.TrySetResult();

    internal void Cancel() => _fired.TrySetCanceled();

    internal override void Wake() => Debug.Fail("A watcher is never claimed, so never woken.");
}
