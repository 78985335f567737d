using System;
using System.Buffers;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;
using CspNet.Remote.Protocol;
using Grpc.Core;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// A named construct hosted by this program (its home), as other programs see it: they attach
/// ends to it over their links, and every operation they send runs here on the ordinary core
/// construct, so local and remote parties share one channel, barrier or bucket and its exact
/// semantics.
/// </summary>
internal abstract class Home
{
    protected Home(string name, NameKind kind, string valueType, int bufferCapacity)
    {
        Name = name;
        Kind = kind;
        ValueType = valueType;
        BufferCapacity = bufferCapacity;
    }

    internal string Name { get; }

    internal NameKind Kind { get; }

    internal string ValueType { get; }

    internal int BufferCapacity { get; }

    private int _attached; // remote ends attached now, bounded by CspNodeOptions.MaxEndsPerName
    private readonly ConcurrentDictionary<HomeEnd, HomeSession> _holders = new(); // the remote ends, and the streams they came on
    private HomeMove? _move;  // set once the home has begun to leave this program
    private int _runningOps;  // remote operations running on the construct now

    /// <summary>
    /// Whether this home can move to a program that holds its ends when this program leaves, and
    /// other programs hold ends now (docs/DISTRIBUTED.md, "A moving home").
    /// </summary>
    internal virtual bool CanMove => false;

    /// <summary>Whether a program holding ends can take the home while this program goes on (BecomeHome).</summary>
    internal bool CanMoveLive => LiveMoveRefusal is null;

    /// <summary>Why the home cannot move while this program goes on (a sentence that follows "cannot move while its home runs: "), or null if it can: an Any2Any or One2Any channel, unbuffered or with a buffer another program can rebuild, that other programs hold ends of.</summary>
    internal virtual string? LiveMoveRefusal => "only a channel moves while its home runs.";

    /// <summary>The move under way, once the home has begun to leave; null before.</summary>
    internal HomeMove? Move => Volatile.Read(ref _move);

    /// <summary>Whether any remote end is attached now.</summary>
    internal bool HasHolders => !_holders.IsEmpty;

    /// <summary>The streams remote ends are attached on now (one per program holding ends).</summary>
    internal IReadOnlyList<HomeSession> Holders => [.. _holders.Values.Distinct()];

    /// <summary>
    /// Begins the move: from now on the streams hold back the operations that start on the home
    /// (answered after the move), and <see cref="HomeMove.Quiet"/> completes once none runs.
    /// </summary>
    internal HomeMove BeginMove()
    {
        var move = new HomeMove();
        Interlocked.Exchange(ref _move, move);
        if (Volatile.Read(ref _runningOps) == 0)
        {
            move.SignalQuiet();
        }

        return move;
    }

    /// <summary>
    /// Ends a move that did not happen (a live move cancelled or refused before the name moved):
    /// operations start on the home again. The operations held meanwhile are answered by
    /// <paramref name="move"/>'s release.
    /// </summary>
    internal void EndMove(HomeMove move) => Interlocked.CompareExchange(ref _move, null, move);

    /// <summary>Begins a move unless one is under way already; null then.</summary>
    internal HomeMove? TryBeginMove()
    {
        var move = new HomeMove();
        if (Interlocked.CompareExchange(ref _move, move, null) is not null)
        {
            return null;
        }

        if (Volatile.Read(ref _runningOps) == 0)
        {
            move.SignalQuiet();
        }

        return move;
    }

    /// <summary>A remote operation starts running on the construct.</summary>
    internal void OperationStarted() => Interlocked.Increment(ref _runningOps);

    /// <summary>A remote operation has ended (its answer is decided).</summary>
    internal void OperationEnded()
    {
        if (Interlocked.Decrement(ref _runningOps) == 0 && Move is { } move)
        {
            move.SignalQuiet();
        }
    }

    /// <summary>What a program taking this home over must install (link.proto, Handover).</summary>
    internal virtual Protocol.Handover DescribeForHandover() => throw new NotSupportedException($"{Kind.WireName()} '{Name}' does not move.");

    /// <summary>
    /// What a program taking this home over must install, with the buffered values in order, taken
    /// out of the construct (this program's own ends cannot use it any more). <paramref name="leaving"/>
    /// names this program, for messages.
    /// </summary>
    internal virtual (Protocol.Handover Offer, IReadOnlyList<byte[]> Values) TakeForHandover(string leaving) => (DescribeForHandover(), []);

    /// <summary>
    /// What a program taking this home over live must install, with the buffered values in order,
    /// taken out of the construct (which is not poisoned: <see cref="Restore"/> puts them back if
    /// the move does not happen). Called once no operation runs on the construct.
    /// </summary>
    internal virtual (Protocol.Handover Offer, IReadOnlyList<byte[]> Values) TakeForLiveMove() => (DescribeForHandover(), []);

    /// <summary>Puts values into the construct, in order: those a moving home handed over, before any end is attached; or, here, those <see cref="TakeForLiveMove"/> took out of it, while no operation runs on it.</summary>
    internal virtual void Restore(IReadOnlyList<byte[]> values)
    {
        if (values.Count > 0)
        {
            throw new NotSupportedException($"{Kind.WireName()} '{Name}' holds no values.");
        }
    }

    /// <summary>The remote ends attached now, with the streams they came on.</summary>
    internal IEnumerable<KeyValuePair<HomeEnd, HomeSession>> HoldersByEnd => _holders;

    /// <summary>Poisons the construct with <paramref name="message"/>: a home that came poisoned, or one that moved away (its local ends cannot follow).</summary>
    internal virtual void PoisonAsMoved(string message)
    {
    }

    /// <summary>
    /// Attaches a remote end, or throws <see cref="InvalidOperationException"/> saying why it
    /// cannot (<see cref="RpcException"/> RESOURCE_EXHAUSTED when <paramref name="maxEnds"/> are attached).
    /// </summary>
    internal HomeEnd Attach(Role role, string kind, string valueType, string peer, int maxEnds, HomeSession? session = null)
    {
        if (kind != Kind.WireName())
        {
            throw new InvalidOperationException($"'{Name}' is {NameRules.WithArticle(Kind.WireName())}, not {NameRules.WithArticle(kind)}.");
        }

        if (valueType != ValueType)
        {
            throw new InvalidOperationException($"'{Name}' carries values of type '{ValueType}', not '{valueType}'.");
        }

        if (Interlocked.Increment(ref _attached) > maxEnds)
        {
            Interlocked.Decrement(ref _attached);
            throw new RpcException(new Status(StatusCode.ResourceExhausted, $"{maxEnds:N0} ends are attached to {Kind.WireName()} '{Name}' already (CspNodeOptions.MaxEndsPerName at its home): close ends you no longer use, or raise the limit there."));
        }

        HomeEnd end;
        try
        {
            end = AttachRole(role, peer);
        }
        catch
        {
            Interlocked.Decrement(ref _attached);
            throw;
        }

        end.BindTo(this);
        if (session is not null)
        {
            _holders[end] = session;
        }

        return end;
    }

    /// <summary>A remote end of this construct is gone (detached, or its program lost): its place is free.</summary>
    internal void EndReleased(HomeEnd end)
    {
        _holders.TryRemove(end, out _);
        Interlocked.Decrement(ref _attached);
    }

    protected abstract HomeEnd AttachRole(Role role, string peer);

    protected InvalidOperationException RoleRefused(Role role, string why) =>
        new($"Cannot attach a {role} end to {Kind.WireName()} '{Name}': {why}");
}

/// <summary>One remote end attached to a <see cref="Home"/>; its operations run on the home's construct.</summary>
internal abstract class HomeEnd
{
    private Home? _home; // the construct whose place this end takes, until Release gives it back

    internal void BindTo(Home home) => _home = home;

    /// <summary>The end's handle on the stream it came on.</summary>
    internal uint Handle { get; set; }

    /// <summary>Whether the end holds write credits (link.proto, Credit) that a moving home must stop first.</summary>
    internal virtual bool GrantsCredits => false;

    /// <summary>The end spends no more credits (its credited values are placed): its unused slots go back, and it is granted none.</summary>
    internal virtual void StopCredits()
    {
    }

    /// <summary>The construct the end is attached to; null once released.</summary>
    internal Home? Home => Volatile.Read(ref _home);

    /// <summary>Gives the end's place on its construct back, once.</summary>
    internal void Release() => Interlocked.Exchange(ref _home, null)?.EndReleased(this);
    /// <summary>
    /// Writes the value <paramref name="value"/> encodes. The bytes may live in pooled arrays that
    /// the caller returns as soon as this method returns: decode them before the first await.
    /// </summary>
    internal virtual Task<OpResult> WriteAsync(ReadOnlySequence<byte> value, CancellationToken cancellationToken) => Task.FromResult(OpResult.WrongOperation("write"));

    internal virtual Task<OpResult> ReadAsync(CancellationToken cancellationToken) => Task.FromResult(OpResult.WrongOperation("read"));

    internal virtual Task<OpResult> SyncAsync(SyncKind kind, CancellationToken cancellationToken) => Task.FromResult(OpResult.WrongOperation(kind.ToString()));

    /// <summary>Completes (OK) after calling <paramref name="ready"/> once a reservation could take something; takes nothing.</summary>
    internal virtual Task<OpResult> WatchAsync(Action ready, CancellationToken cancellationToken) => Task.FromResult(OpResult.WrongOperation("watch"));

    /// <summary>
    /// Sets a value aside (waiting for one if <paramref name="wait"/>), hands it to
    /// <paramref name="reserved"/>, and then commits or releases it as <paramref name="settled"/>
    /// says: OK if taken, CANCELLED if given back or if nothing was set aside.
    /// </summary>
    internal virtual Task<OpResult> ReserveAsync(bool wait, Action<PooledValueBuffer> reserved, Task<bool> settled, CancellationToken cancellationToken) =>
        Task.FromResult(OpResult.WrongOperation("reservation"));

    /// <summary>Whether a Reserve on this end is a writing end's (<see cref="ReserveForWriteAsync"/>) rather than a reading end's.</summary>
    internal virtual bool ReservesForWrites => false;

    /// <summary>
    /// For a writing end: sets a reader or a buffer slot aside for an offer (waiting for one if
    /// <paramref name="wait"/>), calls <paramref name="reserved"/>, and then gives it back unless
    /// <paramref name="reservation"/> placed the writer's value: OK if placed, CANCELLED if given
    /// back or if nothing was set aside.
    /// </summary>
    internal virtual Task<OpResult> ReserveForWriteAsync(bool wait, Action reserved, WriteReservation reservation, CancellationToken cancellationToken) =>
        Task.FromResult(OpResult.WrongOperation("write reservation"));

    internal abstract void Poison();

    /// <summary>
    /// The client takes write credits (link.proto, Credit): a writing end of a buffered channel
    /// grants them through <paramref name="grant"/> (a count, or the poison's message). Others ignore it.
    /// </summary>
    internal virtual void OfferCredits(Action<int, string?> grant)
    {
    }

    /// <summary>
    /// Places a value written with a credit, which never waits (its slot is reserved). False if
    /// this end takes no credited writes, which breaks the stream; any other failure poisons the
    /// channel, since the writer was told its write was done.
    /// </summary>
    internal virtual bool PutCredited(ReadOnlySequence<byte> value, bool tooLarge) => false;

    /// <summary>
    /// A value written with a credit that will never come (its bulk lane and its stream failed
    /// first): its slot is given back and the channel poisoned, saying <paramref name="why"/>, as
    /// for any credited value that cannot be placed.
    /// </summary>
    internal virtual void LoseCredited(string why)
    {
    }

    /// <summary>The end was closed on purpose (Detach): give its place back.</summary>
    internal virtual void Detach()
    {
    }

    /// <summary>The program holding the end vanished. Parties that could now wait forever must be told.</summary>
    internal virtual void Lost(string peer)
    {
    }

    /// <summary>Runs an operation and turns its exceptions into the outcome the client rethrows.</summary>
    protected static async Task<OpResult> Run(Func<CancellationToken, ValueTask<OpResult>> operation, CancellationToken cancellationToken)
    {
        try
        {
            return await operation(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return OpResult.Cancelled;
        }
        catch (PoisonException e)
        {
            return new OpResult(Outcome.Poisoned, StatusCode.OK, e.Message);
        }
        catch (InvalidDataException e)
        {
            return new OpResult(Outcome.Error, StatusCode.InvalidArgument, "The value could not be decoded: " + e.Message);
        }
        catch (InvalidOperationException e)
        {
            return new OpResult(Outcome.Error, StatusCode.FailedPrecondition, e.Message);
        }
#pragma warning disable CA1031 // A failure of one remote operation must not end the home's link: it is reported to the caller.
        catch (Exception e)
#pragma warning restore CA1031
        {
            return new OpResult(Outcome.Error, StatusCode.Internal, e.GetType().Name + ": " + e.Message);
        }
    }
}

/// <summary>How a remote operation ended, as sent back in <c>Completed</c>.</summary>
internal readonly record struct OpResult(Outcome Outcome, StatusCode Status = StatusCode.OK, string? Message = null, int Count = 0, PooledValueBuffer? Value = null, bool CreditUsed = false)
{
    internal static OpResult Ok => new(Outcome.Ok);

    /// <summary>A plain write placed into a slot reserved for its end (link.proto, Completed.credit_used).</summary>
    internal static OpResult OkWithCredit => new(Outcome.Ok, CreditUsed: true);

    internal static OpResult Cancelled => new(Outcome.Cancelled);

    /// <summary>The home moved before the operation happened (link.proto, Completed MOVED).</summary>
    internal static OpResult Moved => new(Outcome.Moved);

    internal static OpResult WrongOperation(string operation) =>
        new(Outcome.Error, StatusCode.FailedPrecondition, $"A {operation} is not possible on this end (check the end's role).");
}
