using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Hosting;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote;

// A channel's home moving to another program (docs/DISTRIBUTED.md, "A moving home"): this program
// hands the channels it hosts over when it leaves, and takes those a leaving home offers it.
public sealed partial class CspNode
{
    // The channels this program holds remote ends of and could host if their home leaves, by name:
    // a factory for a home of the definition a Handover describes.
    private readonly ConcurrentDictionary<string, Func<Protocol.Handover, Home>> _takeable = new(StringComparer.Ordinal);

    /// <summary>Whether this program takes homes leaving programs offer it (false only in tests, to choose which program takes one).</summary>
    internal bool TakesHomes { get; set; } = true;

    /// <summary>
    /// The route of a new remote end: it follows its channel when the home moves (it resolves the
    /// name again and attaches there). A channel this program could host if its home leaves is
    /// remembered, with <paramref name="create"/> making its home here.
    /// </summary>
    private EndRoute RouteFor(EndRequest request, PeerLink link, uint handle, Func<Protocol.Handover, Home> create)
    {
        if (request.Kind is not (NameKind.Any2Any or NameKind.One2Any))
        {
            // Only an Any2Any or One2Any channel's home moves (a channel with one reading end lives with it).
            return new EndRoute(new Route(link, handle), null, request.Name);
        }

        _takeable.TryAdd(request.Name, create);

        return new EndRoute(new Route(link, handle), (from, ct) => ReattachAsync(request, from, ct), request.Name);
    }

    /// <summary>Attaches the end again at the home the NameServer names now, within the peer timeout.</summary>
    private Task<Route> ReattachAsync(EndRequest request, Route from, CancellationToken cancellationToken) =>
        AttachAtNamedHomeAsync(request, from, cancellationToken);

    /// <summary>
    /// Attaches an end at the home the NameServer names now, within the peer timeout: an end that
    /// follows a move from <paramref name="from"/>, or (null) one of this program's own ends whose
    /// channel moved away from here.
    /// </summary>
    private async Task<Route> AttachAtNamedHomeAsync(EndRequest request, Route? from, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        using var bounded = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        bounded.CancelAfter(_runtime.Options.PeerTimeout);
        try
        {
            NameRecord record = await _names!.ResolveRecordAsync(request.Name, bounded.Token).ConfigureAwait(false);
            if (record.Kind != request.Kind.WireName() || record.ValueType != request.ValueType)
            {
                throw NameRules.Mismatch(request.Name, record.Kind, record.ValueType, request.Kind.WireName(), request.ValueType);
            }

            if (from is not null && from.Link.IsFailed && string.Equals($"{record.Host}:{record.Port}", from.Link.Target, StringComparison.OrdinalIgnoreCase))
            {
                // The link broke and the name still lives there: the home was lost, it did not move.
                throw from.Link.Failure is { } failure
                    ? new PeerLostException($"The home of '{request.Name}' did not move: {failure.Message}", failure)
                    : new PeerLostException($"The home of '{request.Name}', the program at {from.Link.Target}, was lost (the name did not move).");
            }

            PeerLink link = await _links!.GetAsync(record.Host, record.Port, bounded.Token).ConfigureAwait(false);
            uint handle = await link.AttachAsync(request.Name, request.Kind, request.ValueType, request.Role, bounded.Token).ConfigureAwait(false);
            if (request.Role == Protocol.Role.Writer)
            {
                // Before any write there: the new home grants credits once the end has written.
                link.OpenCredits(handle);
            }

            return new Route(link, handle);
        }
        catch (OperationCanceledException e) when (!cancellationToken.IsCancellationRequested)
        {
            throw new PeerLostException(
                $"The home of '{request.Name}' moved, and its new home could not be found and attached within {_runtime.Options.PeerTimeout.TotalSeconds:0.#} s (CspNodeOptions.PeerTimeout): the program that took it may have left too.",
                e);
        }
    }

    /// <summary>Installs a channel a leaving home offers this program (link.proto, Handover); returns this program's incarnation at the NameServer.</summary>
    private async Task<string> TakeHomeAsync(Protocol.Handover handover, IReadOnlyList<byte[]> values)
    {
        if (Volatile.Read(ref _disposed) != 0 || _names is null)
        {
            throw new InvalidOperationException($"{ProgramLabel} is leaving too.");
        }

        if (!TakesHomes || !_takeable.TryGetValue(handover.Name, out Func<Protocol.Handover, Home>? create))
        {
            throw new InvalidOperationException($"{ProgramLabel} holds no end of '{handover.Name}' that it could host.");
        }

        Home home = create(handover);
        if (home.Kind.WireName() != handover.Kind || home.ValueType != handover.ValueType)
        {
            throw new InvalidOperationException($"'{handover.Name}' is {handover.Kind} of '{handover.ValueType}', not what {ProgramLabel} knows it as.");
        }

        // The buffer's values first, in order; then the poison, which leaves them readable.
        home.Restore(values);
        if (handover.Poisoned)
        {
            home.PoisonAsMoved(handover.PoisonMessage);
        }

        (Home added, bool created) = _runtime.Homes.AddOrJoin(handover.Name, () => home, joinExisting: true);
        if (!created || !ReferenceEquals(added, home))
        {
            throw new InvalidOperationException($"{ProgramLabel} hosts a construct named '{handover.Name}' already.");
        }

        try
        {
            await _names.AdoptAsync(
                new NameEntry
                {
                    Name = handover.Name,
                    Kind = home.Kind,
                    ValueType = handover.ValueType,
                    BufferCapacity = handover.BufferCapacity,
                    Endpoint = new LinkEndpoint(_advertisedHost, Port),
                },
                CancellationToken.None).ConfigureAwait(false);
        }
        catch
        {
            _runtime.Homes.Remove(home);
            throw;
        }

        return _names.PublicIncarnation;
    }

    /// <summary>
    /// A channel this program took whose old home could not say it moved the name (its link failed
    /// first, or it gave up and poisoned the channel): kept if the NameServer names this program,
    /// else dropped and poisoned, so that no copy stays here that the name does not lead to (this
    /// program's own getters would hand it out). An unreachable NameServer keeps it.
    /// </summary>
    private async Task SettleTakeAsync(string name)
    {
        if (_names is not { } names || !_runtime.Homes.TryGetValue(name, out Home? home))
        {
            return;
        }

        using var bound = new CancellationTokenSource(_runtime.Options.PeerTimeout);
        try
        {
            NameRecord record = await names.ResolveRecordAsync(name, bound.Token).ConfigureAwait(false);
            if (record.Port == Port && string.Equals(record.Host, _advertisedHost, StringComparison.OrdinalIgnoreCase))
            {
                return; // the move completed before the old home was lost
            }
        }
        catch (OperationCanceledException) when (bound.IsCancellationRequested)
        {
            // No program registered it within the bound: not this program's either.
        }
#pragma warning disable CA1031 // Cannot tell: keep the channel rather than drop one the name may lead to.
        catch (Exception e)
#pragma warning restore CA1031
        {
            TakeLog.Unsettled(_runtime.Logger, name, e.Message);
            return;
        }

        _runtime.Homes.Remove(home);
        home.PoisonAsMoved($"'{name}' did not move to {ProgramLabel}: its old home was lost, or gave up on the move, before it moved the name. Get the channel again by name.");
        try
        {
            await names.UnregisterAsync(name, bound.Token).ConfigureAwait(false);
        }
#pragma warning disable CA1031 // Only forgets the adopted name; the NameServer never named this program.
        catch (Exception)
#pragma warning restore CA1031
        {
        }

        TakeLog.Dropped(_runtime.Logger, name);
    }

    /// <summary>
    /// Hands every channel this program hosts that can move, and that other programs hold ends of,
    /// to one of those programs; the others stay and are lost with this program, as before.
    /// </summary>
    private async Task HandOverHomesAsync()
    {
        if (_names is not { } names)
        {
            return;
        }

        List<Task> moves = [];
        foreach (Home home in _runtime.Homes.Snapshot())
        {
            if (home.CanMove)
            {
                moves.Add(HomeMover.HandOverAsync(home, _runtime, (name, to, ct) => names.MoveAsync(name, to, ct)));
            }
        }

        await Task.WhenAll(moves).ConfigureAwait(false);
    }

    private static partial class TakeLog
    {
        [LoggerMessage(1, LogLevel.Warning, "The channel '{Name}' taken from a home that could not confirm its move was dropped: the NameServer names another program.")]
        internal static partial void Dropped(ILogger logger, string name);

        [LoggerMessage(2, LogLevel.Warning, "Could not settle the channel '{Name}' taken from a home that could not confirm its move; it stays here: {Reason}")]
        internal static partial void Unsettled(ILogger logger, string name, string reason);
    }
}
