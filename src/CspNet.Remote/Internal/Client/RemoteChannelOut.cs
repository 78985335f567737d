using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Internal.Processes;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Internal.Serialization;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal.Client;

/// <summary>
/// A writing end whose channel lives in another program. A write sends the value over the link
/// and completes when the home answers that a reader took it (or the buffer accepted it), exactly
/// as a local write; a cancelled write is cancelled at the home, and whichever of the two happened
/// first there is what the caller sees.
/// </summary>
/// <remarks>
/// <para>
/// A buffered channel streams instead (<see cref="CspNodeOptions.PipelineBufferedWrites"/>): the
/// home grants the end credits, each a slot of its buffer reserved for one value, and a write that
/// can spend one completes as soon as its value is handed to the link. Its value holds a slot of
/// the buffer already, so the write is as complete as a local buffered write; the buffer's capacity
/// stays exact. A write that finds no credit waits for the home as above (the home places it in a
/// slot reserved for the end if credits are on their way here; the next write spends the others).
/// Each process waits for its write before the next, so its values reach the home in order, spent
/// credit or not. A <c>byte[]</c> value on the bulk lane goes from the writer's own array, credited
/// or not: a credited write completes before the lane has read it, so the writer must not change
/// an array it wrote (values are passed by reference, as on a local channel).
/// </para>
/// <para>
/// It is an output guard that commits asynchronously (docs/GUARD-CONTRACT.md, docs/DISTRIBUTED.md
/// "A remote selecting writer"), over the Watch, Reserve, Settle and Deliver frames of link.proto:
/// the home sets aside a slot of the buffer, or a parked plain reader, for the offer; the value
/// crosses only once the selection chose the offer (<see cref="Confirm"/> sends it in a Deliver,
/// without waiting), and a release gives the slot or reader back. An end that holds a credit
/// reserves it here, without a round trip, and a chosen offer is then a credited write.
/// </para>
/// <para>Like a local end, it belongs to one process; a shared (Any) end may be used by several.</para>
/// </remarks>
internal sealed class RemoteChannelOut<T> : AltingChannelOut<T>, IDetachableEnd
{
    private readonly EndRoute _route;
    private CreditedRoute _credited;   // the route whose home granted the credits: credited writes go there
    private readonly ValueCodec<T> _codec;
    private readonly bool _bytesValue; // the built-in byte[] codec: a home may receive the value straight from the lane
    private readonly string _name;
    private readonly long _maxValueSize;
    private readonly HomeReadiness _readiness;
    private readonly EndDetachment _detachment;

    // Owner only: the offer, and what the current selection reserved for it.
    private T? _value;
    private bool _hasOffer;
    private PendingOp? _reservation;   // a reader or slot set aside at the home
    private PeerLink? _reservedOn;     // the link of that reservation (its op_id is that stream's)
    private CreditedRoute? _reservedCredit; // a credit of this end taken for the offer, and where it was granted
    private string? _reservedPoison;   // the channel is poisoned: the guard is chosen, and the selection throws

    internal RemoteChannelOut(EndRoute route, ValueCodec<T> codec, string name, long maxValueSize)
    {
        _route = route;
        _credited = new CreditedRoute(route.Current, route.Link.OpenCredits(route.Handle));
        _codec = codec;
        _bytesValue = codec is BytesCodec;
        _name = name;
        _maxValueSize = maxValueSize;
        _readiness = new HomeReadiness(route, $"Offering to '{name}'");
        _detachment = new EndDetachment(route, $"writing end of '{name}'");
    }

    /// <summary>
    /// Detaches the end: its unused credits go back to the home's buffer, and a single writing
    /// end's place is free for another program. Values whose writes completed are placed first
    /// (they precede the Detach on the link).
    /// </summary>
    public Task DetachAsync(CancellationToken cancellationToken)
    {
        Task detaching = _detachment.DetachAsync(cancellationToken);
        _readiness.Detached(_detachment.Disposed(" while a selection offered to it: nothing was written"));
        return detaching;
    }

    /// <summary>The link this end writes on.</summary>
    internal PeerLink Link => _route.Link;

    public override T? OfferedValue => _value;

    public override bool HasOffer => _hasOffer;

    public override AltingChannelOut<T> Offer(T value)
    {
        _detachment.ThrowIfDetached();
        _value = value;
        _hasOffer = true;
        return this;
    }

    public override void Write(T value)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Write(value)", "WriteAsync(value)");
        ValueTask write = WriteAsync(value);
        if (!write.IsCompletedSuccessfully)
        {
#pragma warning disable RS0030 // The synchronous Write() over WriteAsync() when it did not complete at once.
            write.AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
        }
    }

    public override ValueTask WriteAsync(T value, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        PooledValueBuffer? bytes = null;
        byte[]? array = null;
        PendingOp op;
        Route at;
        CreditedRoute credited;
        Activity? activity = RemoteTracing.StartSend(_name);
        long started = RemoteMetrics.StartWrite();
        try
        {
            _detachment.ThrowIfDetached();
            credited = Credited();
            if (credited.Credits?.Poisoned is { } poisoned)
            {
                // The home said the channel is poisoned: fail as its answer to a plain write would.
                throw new PoisonException(poisoned);
            }

            array = FromItsArray(value, credited);
            if (array is null)
            {
                bytes = Encode(value);
            }

            PeerLink link = credited.Route.Link;
            if (credited.Credits is { } credits)
            {
                PendingOp? plain = null;
                lock (credits.Gate)
                {
                    if (credits.TryTakeLocked())
                    {
                        // Complete when handed to the link: no round trip to time. A byte[] goes
                        // from its own array when the lane takes it (the writer no longer changes it).
                        string traceparent = RemoteTracing.Traceparent(activity);
                        if (array is null || !link.TrySendCreditedBytesValue(credited.Route.Handle, array, traceparent))
                        {
                            link.SendCredited(credited.Route.Handle, bytes ?? Encode(value), traceparent, _bytesValue);
                        }
                    }
                    else
                    {
                        credits.BeginPlainLocked();
                        plain = SendPlain(credited.Route, ref bytes, array, value, activity);
                    }
                }

                // Outside the gate: the lane's send may run on this thread.
                link.SendQueuedOnLane();
                if (plain is null)
                {
                    activity?.Stop();
                    return default;
                }

                op = plain;
                at = credited.Route;
            }
            else
            {
                op = SendPlain(at = credited.Route, ref bytes, array, value, activity);
                link.SendQueuedOnLane();
            }
        }
#pragma warning disable CA1031 // Not swallowed: it faults the returned ValueTask, as an async method would.
        catch (Exception e)
#pragma warning restore CA1031
        {
            RemoteTracing.Stop(activity, e.Message);
            return ValueTask.FromException(Named(e));
        }

        return WaitForHomeAsync(at, op, bytes, array, value, activity, started, credited.Credits, cancellationToken);
    }

    /// <summary>
    /// A <c>byte[]</c> value that a write sends on the bulk lane from its own array, with no copy
    /// into an encode buffer. A plain write waits for the home's answer; a credited write completes
    /// before the lane has read the array, so the writer must not change an array it wrote (as with a
    /// local channel, whose reader gets the array itself). Null: encode the value (another type, or
    /// a value under the lane's threshold or over the largest allowed).
    /// </summary>
    private byte[]? FromItsArray(T value, CreditedRoute credited) =>
        _bytesValue && value is byte[] array && array.Length < _maxValueSize && credited.Route.Link.TakesBytesValueOnLane(array.Length)
            ? array
            : null;

    /// <summary>
    /// The route operations take now, with the credits its home grants this end: after a move, the
    /// new home's (the old home's were stopped before the move, link.proto StopCredits).
    /// </summary>
    private CreditedRoute Credited()
    {
        Route now = _route.Current;
        CreditedRoute credited = Volatile.Read(ref _credited);
        if (!ReferenceEquals(credited.Route, now))
        {
            credited = new CreditedRoute(now, now.Link.OpenCredits(now.Handle));
            Volatile.Write(ref _credited, credited);
        }

        return credited;
    }

    /// <summary>A route and the credits granted to the end on it (null: this program asks for none).</summary>
    private sealed record CreditedRoute(Route Route, WriteCredits? Credits);

    // The link's failure is shared by all its ends and the encoder knows no names: say which
    // channel (and, for a value too large, whose limit), as a home's answer would.
    private Exception Named(Exception e) =>
        e is PeerLostException lost ? new PeerLostException($"Writing to '{_name}' failed. {lost.Message}", lost) : e;

    private PooledValueBuffer Encode(T value)
    {
        try
        {
            return ValueEncoder.EncodePooled(_codec, value, _maxValueSize);
        }
        catch (InvalidOperationException tooLarge)
        {
            throw new InvalidOperationException($"Writing to '{_name}' failed in the program '{_route.Link.LocalProgram}': {tooLarge.Message}", tooLarge);
        }
    }

    /// <summary>
    /// A plain write: its bytes on the bulk lane if they go there (<see cref="PendingOp.ViaLane"/>),
    /// from the value's own <paramref name="array"/> if it has one, else in chunks on the link
    /// (encoded into <paramref name="bytes"/> first if they were not).
    /// </summary>
    private PendingOp SendPlain(Route at, ref PooledValueBuffer? bytes, byte[]? array, T value, Activity? activity, bool linkOnly = false)
    {
        PeerLink link = at.Link;
        uint handle = at.Handle;
        bool fromArray = array is not null && !linkOnly && link.TakesBytesValueOnLane(array.Length);
        if (!fromArray)
        {
            bytes ??= Encode(value);
        }

        PendingOp op = link.Begin();
        string traceparent = RemoteTracing.Traceparent(activity);
        if (fromArray && array is not null && link.TrySendBytesValueOnLane(op.Id, array))
        {
            op.ViaLane = true;
            link.Send(new ClientFrame { Write = new Write { Handle = handle, OpId = op.Id, Lane = true, Traceparent = traceparent } });
            return op;
        }

        // The lane failed since it was asked (or the value is not sent from its array): the link,
        // or the lane from the encoded bytes. The size was checked, so encoding does not throw here.
        bytes ??= Encode(value);
        if (!linkOnly && link.TrySendOnLane(op.Id, bytes.WrittenMemory, _bytesValue))
        {
            op.ViaLane = true;
            link.Send(new ClientFrame { Write = new Write { Handle = handle, OpId = op.Id, Lane = true, Traceparent = traceparent } });
            return op;
        }

        link.SendValue(op.Id, bytes.WrittenMemory, last => new ClientFrame { Write = new Write { Handle = handle, OpId = op.Id, Data = last, Traceparent = traceparent } });
        return op;
    }

    /// <summary>A write without a credit: one round trip, exact under cancellation (see the class).</summary>
    private async ValueTask WaitForHomeAsync(Route at, PendingOp op, PooledValueBuffer? bytes, byte[]? array, T value, Activity? activity, long started, WriteCredits? counted, CancellationToken cancellationToken)
    {
        Completion completion = await at.Link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        for (int moves = 1; ; moves++)
        {
            if (op.ViaLane && completion is { Lost: null, Outcome: Outcome.Error, Status: Grpc.Core.StatusCode.Aborted })
            {
                // The lane failed before the home had the value, and the home wrote nothing: the value
                // goes again, on the link, under a new op (link.proto, Write.lane). Exactly once.
                op = SendPlain(at, ref bytes, array, value, activity, linkOnly: true);
                completion = await at.Link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
            }

            completion = _route.Explained(at, completion);
            if (!_route.Follows(completion))
            {
                break;
            }

            if (cancellationToken.IsCancellationRequested || _detachment.IsDetached)
            {
                // The home moved before the write happened, and the writer gave up meanwhile: nothing was written.
                completion = completion with { Outcome = Outcome.Cancelled };
                break;
            }

            // The home moved before the write happened: the kept bytes go to the new home.
            try
            {
                at = await _route.FollowAsync(at, moves, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                completion = completion with { Outcome = Outcome.Cancelled };
                break;
            }
            catch (PeerLostException e)
            {
                completion = completion with { Outcome = Outcome.Error, Lost = e };
                break;
            }
            catch (PoisonException e)
            {
                completion = completion with { Outcome = Outcome.Poisoned, Message = e.Message, Lost = null };
                break;
            }

            // Counted with the new home's credits: it may spend one of them on this write.
            counted?.EndPlain(creditUsed: false);
            counted = at.Link.OpenCredits(at.Handle);
            if (counted is not null)
            {
                lock (counted.Gate)
                {
                    counted.BeginPlainLocked();
                    op = SendPlain(at, ref bytes, array, value, activity);
                }
            }
            else
            {
                op = SendPlain(at, ref bytes, array, value, activity);
            }

            at.Link.SendQueuedOnLane();
            completion = await at.Link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        }

        RemoteMetrics.EndWrite(started);
        counted?.EndPlain(completion.Lost is null && op.CreditUsed);
        if (completion.Lost is null)
        {
            // The home answered, so it had every frame: nothing reads the buffer any more.
            bytes?.Return();
        }

        try
        {
            if (_detachment.CancelledByDetach(completion, cancellationToken))
            {
                throw _detachment.Disposed(" while this write waited: nothing was written");
            }

            completion.ThrowIfFailed($"Writing to '{_name}'", cancellationToken);
        }
        catch (Exception e)
        {
            RemoteTracing.Stop(activity, e.Message);
            throw;
        }

        activity?.Stop();
    }

    public override void Poison()
    {
        _detachment.ThrowIfDetached();
        _route.Poison();

        // Credited writes would not hear of it from the home in time: fail them here, as the
        // home would fail a plain write after this poison.
        Credited().Credits?.Poison($"'{_name}' is poisoned: this end poisoned it.");
    }

    // ---- the output guard ------------------------------------------------------------------------

    protected internal override GuardCapabilities Capabilities => GuardCapabilities.CommitsAsynchronously;

    protected internal override bool Prepare(GuardSite site)
    {
        _detachment.ThrowIfDetached();
        if (!_hasOffer)
        {
            throw new InvalidOperationException(
                $"The {this} takes part in a selection without a value to offer. Call Offer(value) on the end before each selection that may choose it (an offer is written at most once), or pass a false precondition for it.");
        }

        return true;
    }

    // Committing takes a round trip (or a credit, which TryReserveAsync takes): say "ready" and the
    // engine reserves this end in its turn. Not known ready: a watch finds out.
    protected internal override bool TryCommit(GuardSite site)
    {
        _readiness.SignalOrWatch(site, enabling: false, readyHere: HasCreditOrPoison);
        return false;
    }

    protected internal override void Enable(GuardSite site) => _readiness.SignalOrWatch(site, enabling: true, readyHere: HasCreditOrPoison);

    protected internal override void Disable(GuardSite site) => _readiness.Disable();

    private bool HasCreditOrPoison => Credited().Credits is { } credits && (credits.Poisoned is not null || credits.HasFree);

    protected internal override async ValueTask<bool> TryReserveAsync(GuardSite site, CancellationToken cancellationToken)
    {
        CreditedRoute credited = Credited();
        if (credited.Credits is { } credits)
        {
            if (credits.Poisoned is { } poisoned)
            {
                // As a local end: a poisoned channel commits the guard, and the selection throws.
                _reservedPoison = poisoned;
                return true;
            }

            lock (credits.Gate)
            {
                if (!credited.Route.Link.IsFailed && credits.TryTakeForOfferLocked())
                {
                    // A slot of the home's buffer is this end's already: no round trip.
                    _reservedCredit = credited;
                    return true;
                }
            }
        }

        // Enabled: the other guards can still win meanwhile, so waiting at the home is safe. In the
        // scan nothing else is enabled: ask for what is there now.
        bool wait = _readiness.IsEnabled;
        Route at = credited.Route;
        PeerLink link = at.Link;
        PendingOp op = link.Begin(reserves: true);
        var reserve = new ClientFrame { Reserve = new Reserve { Handle = at.Handle, OpId = op.Id, Wait = wait } };
        if (credited.Credits is { } held)
        {
            // The home may set one of this end's credits aside for it, as for a plain write: one is kept back until it answers.
            lock (held.Gate)
            {
                held.BeginPlainLocked();
                link.Send(reserve);
            }
        }
        else
        {
            link.Send(reserve);
        }

        _ = EndReservationAsync(op, credited.Credits);
        using (cancellationToken.UnsafeRegister(static s => { var (l, id) = ((PeerLink, ulong))s!; l.Cancel(id); }, (link, op.Id)))
        {
            await Task.WhenAny(op.Reserved, op.Task).ConfigureAwait(false);
        }

        if (op.Reserved.IsCompleted)
        {
            op.ReleaseReserved(); // a writing end's Reserved carries no value
            if (cancellationToken.IsCancellationRequested)
            {
                // Set aside although the selection gave up: give it back before saying "nothing reserved".
                link.Settle(op.Id, accept: false);
                return false;
            }

            _reservation = op;
            _reservedOn = link;
            return true;
        }

        Completion completion = _route.Explained(at, await op.Task.ConfigureAwait(false));
        if (_detachment.CancelledByDetach(completion, cancellationToken))
        {
            throw _detachment.Disposed(" while its selection waited: nothing was written");
        }

        if (_route.Follows(completion))
        {
            // Nothing was set aside, and the home moved: watch (and reserve) at the new home.
            if (!cancellationToken.IsCancellationRequested)
            {
                await _route.FollowAsync(at, 1, cancellationToken).ConfigureAwait(false);
                _readiness.NotReady();
            }

            return false;
        }

        if (_readiness.EndedUnreserved(completion, cancellationToken, out string? poison))
        {
            _reservedPoison = poison;
            return true;
        }

        return false;
    }

    /// <summary>A reservation's answer: the credit kept back for it is free again (or was spent at the home).</summary>
    private static async Task EndReservationAsync(PendingOp op, WriteCredits? counted)
    {
        Completion completion = await op.Task.ConfigureAwait(false);
        counted?.EndPlain(completion.Lost is null && op.CreditUsed);
    }

    protected internal override void Confirm(GuardSite site)
    {
        if (_detachment.IsDetached && (_reservedCredit is not null || _reservation is not null))
        {
            // The home gave the credit or what it set aside back when the end detached: nothing is written.
            _reservedCredit = null;
            _reservation = null;
            throw _detachment.Disposed(" while its selection held a place at the home: nothing was written");
        }

        if (_reservedPoison is { } poison)
        {
            // Not written: the offer stays, as for a guard that was not chosen.
            _reservedPoison = null;
            throw new PoisonException(poison);
        }

        if (_reservedCredit is { Credits: { } credits } credited)
        {
            _reservedCredit = null;
            PooledValueBuffer bytes;
            try
            {
                bytes = ValueEncoder.EncodePooled(_codec, _value!, _maxValueSize);
            }
            catch
            {
                lock (credits.Gate)
                {
                    credits.ReturnLocked();
                }

                throw;
            }

            lock (credits.Gate)
            {
                // Under the gate: a home that asked the end to stop spending credits hears so only after this Write.
                credited.Route.Link.SendCredited(credited.Route.Handle, bytes, traceparent: string.Empty, _bytesValue);
                credits.OfferSentLocked();
            }

            credited.Route.Link.SendQueuedOnLane();
        }
        else if (_reservation is { } op)
        {
            _reservation = null;
            PeerLink link = _reservedOn!;
            _reservedOn = null;
            if (link.IsFailed)
            {
                // The home gives what it set aside back when its stream ends: nothing was written.
                throw new PeerLostException($"Lost the link to {link.Target} while offering to '{_name}': nothing was written.");
            }

            PooledValueBuffer bytes;
            try
            {
                bytes = ValueEncoder.EncodePooled(_codec, _value!, _maxValueSize);
            }
            catch
            {
                link.Settle(op.Id, accept: false);
                throw;
            }

            // The value crosses now, without waiting: the home places it before anything this end
            // sends later. Its bytes go back once the home has answered (it had every frame then).
            link.SendValue(op.Id, bytes.WrittenMemory, last => new ClientFrame { Deliver = new Deliver { OpId = op.Id, Data = last } });
            _ = ReturnWhenAnsweredAsync(op, bytes);
        }

        // Written: an offer is used exactly once.
        _value = default;
        _hasOffer = false;
    }

    private static async Task ReturnWhenAnsweredAsync(PendingOp op, PooledValueBuffer bytes)
    {
        Completion completion = await op.Task.ConfigureAwait(false);
        if (completion.Lost is null)
        {
            bytes.Return();
        }
    }

    protected internal override void Release(GuardSite site)
    {
        if (_detachment.IsDetached)
        {
            // The home gave everything back when the end detached.
            _reservedCredit = null;
            _reservation = null;
        }

        if (_reservedCredit is { Credits: { } credits })
        {
            _reservedCredit = null;
            lock (credits.Gate)
            {
                credits.ReturnLocked();
            }
        }

        if (_reservation is { } op)
        {
            _reservation = null;
            PeerLink link = _reservedOn!;
            _reservedOn = null;
            link.Settle(op.Id, accept: false);
        }

        _reservedPoison = null;
    }

    public override string ToString() => $"writing end of '{_name}' at {_route.Link.Target}";
}
