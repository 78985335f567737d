using System;
using CspNet.Alternation;
using CspNet.Internal;
using CspNet.Internal.Scheduling;

namespace CspNet;

// The guard contract of a channel's ends: what ChannelReadEnd{T} and ChannelWriteEnd{T} delegate to.
//
// Scan (TryCommit*): the selecting alternation has nothing parked, so nobody can commit it
// meanwhile; it may take a value from, or give one to, any parked partner, including another
// alternation's parked waiter, whose claim commits that alternation.
//
// Enable: the alternation may already be claimed through a waiter it parked on another channel.
// Committing now takes two things at once: its own state and the partner. It claims itself first
// and then pairs only with a partner that cannot refuse (a plain waiter, the buffer). Where the
// only partners are other alternations' waiters, it parks its own waiter and signals them: each
// wakes, withdraws and pairs in its next scan. This is why a write wakes at most the alternations
// that can take it, and only one of them commits.
public abstract partial class CspChannel<T>
{
    /// <summary>Scan phase of an input guard: take a value into the end's hand-over slot.</summary>
    internal bool TryCommitInput(ChannelReadEnd<T> end, AlternativeCore selection)
    {
        ref HeldValue<T> held = ref end.Slot;
        if (held.IsHolding)
        {
            // Chosen before and not read yet: still ready, and taking another value would
            // overwrite the one held.
            return true;
        }

        if (!MaybeReadable)
        {
            return false;
        }

        Waiter<T>? partner;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            end.BindLocked(selection);
            if (held.IsHolding)
            {
                return true;
            }

            if (TryTakeLocked(self: null, plainOnly: false, out T item, out partner))
            {
                held.Hold(item);
            }
            else if (_poisoned && !TakesHeldBackLocked())
            {
                held.HoldPoison();
            }
            else
            {
                return false;
            }

            AssertInvariants();
        }

        partner?.Wake();
        return true;
    }

    /// <summary>Enable phase of an input guard: commit now if a value is there, else park the end's waiter.</summary>
    internal void EnableInput(ChannelReadEnd<T> end, GuardSite site, AlternativeCore selection)
    {
        ref HeldValue<T> held = ref end.Slot;
        Waiter<T>? partner = null;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            end.BindLocked(selection);
            if (held.IsHolding)
            {
                site.TryClaim();
                return;
            }

            if (ReadableWithoutOffersLocked())
            {
                if (!site.TryClaim())
                {
                    return; // Claimed through another guard meanwhile: that one is chosen.
                }

                if (TryTakeLocked(self: selection, plainOnly: true, out T item, out partner))
                {
                    held.Hold(item);
                }
                else
                {
                    held.HoldPoison();
                }

                // Buffer space was freed, and only a plain writer could refill it here: offers of
                // other alternations fill it in their next scan.
                _writers.SignalSelections(except: selection);
            }
            else
            {
                ThrowIfCannotParkLocked(isReader: true, self: selection);
                SelectionWaiter<T> node = end.Node;
                node.Arm(site, selection, default);
                _readers.Enqueue(node, isReader: true);

                // While reads are held back, no offer can pair with this reader: signalling them
                // would only make both sides scan and signal each other again until the hold settles.
                if (!TakesHeldBackLocked())
                {
                    _writers.SignalSelections(except: selection);
                }
            }

            AssertInvariants();
        }

        partner?.Wake();
    }

    /// <summary>Withdraws the end's waiter; a value a partner handed to it moves into the hand-over slot.</summary>
    internal void DisableInput(ChannelReadEnd<T> end, AlternativeCore selection)
    {
        SelectionWaiter<T> node = end.Node;
        if (!WithdrawIfArmed(node, selection))
        {
            return;
        }

        // The claim (under the lock) happened before the removal: its hand-over is visible.
        if (node.WasClaimed)
        {
            if (node.Error is not null)
            {
                end.Slot.HoldPoison();
            }
            else
            {
                end.Slot.Hold(node.Item!);
            }
        }

        node.Disarm();
    }

    /// <summary>
    /// Scan phase of an output guard: deliver <paramref name="value"/> if a reader or buffer space is
    /// there. A poisoned channel commits the guard with the poison as its failure.
    /// </summary>
    internal bool TryCommitOutput(ChannelWriteEnd<T> end, AlternativeCore selection, T value)
    {
        Waiter<T>? partner;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            end.BindLocked(selection);
            if (_poisoned)
            {
                end.Failure = CreatePoisoned();
                return true;
            }

            if (!TryPutLocked(value, self: null, plainOnly: false, out partner))
            {
                return false;
            }

            AssertInvariants();
        }

        partner?.Wake();
        return true;
    }

    /// <summary>Enable phase of an output guard: deliver now if a plain reader or buffer space is there, else park the offer.</summary>
    internal void EnableOutput(ChannelWriteEnd<T> end, GuardSite site, AlternativeCore selection, T value)
    {
        Waiter<T>? partner = null;
        ControlPoint.BeforeLock(this);
        lock (this)
        {
            AssertInvariants();
            end.BindLocked(selection);
            if (SingleWriter && _writers.HasOtherThan(selection) && _writers.HasPartyOtherThan(selection))
            {
                ThrowHelper.ThrowSharedOneEnd(Kind, isReader: false);
            }

            if (_poisoned)
            {
                if (site.TryClaim())
                {
                    end.Failure = CreatePoisoned();
                }

                return;
            }

            if ((_readers.HasPlain() && MayHandToReaderLocked()) || (_buffer is { } buffer && !IsFullLocked(buffer)))
            {
                if (!site.TryClaim())
                {
                    return;
                }

                DeliverClaimedLocked(end, value, selection, out partner);

                // A value went into the buffer: alternations parked as readers take it in their next scan.
                _readers.SignalSelections(except: selection);
            }
            else
            {
                SelectionWaiter<T> node = end.Node;
                node.Arm(site, selection, value);
                _writers.Enqueue(node, isReader: false);
                if (!TakesHeldBackLocked())
                {
                    _readers.SignalSelections(except: selection);
                }
            }

            AssertInvariants();
        }

        partner?.Wake();
    }

#pragma warning disable CA1031 // The buffer's exception becomes the failure the selection throws.
    private void DeliverClaimedLocked(ChannelWriteEnd<T> end, T value, object selection, out Waiter<T>? partner)
    {
        AssertLockHeld();
        try
        {
            if (!TryPutLocked(value, self: selection, plainOnly: true, out partner))
            {
                throw new InvalidOperationException($"The buffer of {Kind} reported free space but did not take the value.");
            }
        }
        catch (Exception e)
        {
            partner = null;
            end.Failure = e;
        }
    }
#pragma warning restore CA1031

    /// <summary>Withdraws a parked offer; if a reader claimed it first, its outcome (poison or a buffer's exception) becomes the guard's failure.</summary>
    internal void DisableOutput(ChannelWriteEnd<T> end, AlternativeCore selection)
    {
        SelectionWaiter<T> node = end.Node;
        if (!WithdrawIfArmed(node, selection))
        {
            return;
        }

        if (node.WasClaimed && node.Error is { } error)
        {
            end.Failure = error;
        }

        node.Disarm();
    }

    /// <summary>
    /// Takes a selection waiter armed for <paramref name="selection"/> out of its queue (if a partner
    /// has not already); false if it is not armed for it. A misused end's node may be armed for
    /// another alternative, whose waiter must stay.
    /// </summary>
    private bool WithdrawIfArmed(SelectionWaiter<T> node, AlternativeCore selection)
    {
        if (node.Selection != selection)
        {
            return false;
        }

        ControlPoint.BeforeLock(this);
        lock (this)
        {
            if (node.IsReader)
            {
                _readers.Remove(node);
            }
            else
            {
                _writers.Remove(node);
            }

            AssertInvariants();
        }

        return true;
    }
}
