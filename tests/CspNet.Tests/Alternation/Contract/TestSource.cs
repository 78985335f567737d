namespace CspNet.Tests.Alternation.Contract;

/// <summary>Which reading ends a scenario runs over.</summary>
public enum EndKind
{
    /// <summary>CspNet channel ends (<see cref="AltingChannelIn{T}"/>).</summary>
    Local,

    /// <summary><see cref="DelayedChannelEnd{T}"/> with no latency: the whole asynchronous contract path, deterministically.</summary>
    Remote,

    /// <summary><see cref="DelayedChannelEnd{T}"/> with random latency: pushes late, duplicated and out of order.</summary>
    RemoteLagging,
}

/// <summary>
/// What scenarios read from, whatever the ends: writers write to it, and each reading process gets
/// its own end (<see cref="CreateEnd"/>), a channel's <see cref="AltingChannelIn{T}"/> or a
/// <see cref="DelayedChannelEnd{T}"/> over a <see cref="RemotePeer{T}"/>.
/// </summary>
internal abstract class TestSource
{
    internal abstract bool IsRemote { get; }

    /// <summary>A source of <paramref name="kind"/>: an Any2Any channel, or a remote peer; unbuffered when <paramref name="capacity"/> is 0.</summary>
    internal static TestSource Create(EndKind kind, int capacity = 0, int stealPerMille = 0) => kind switch
    {
        EndKind.Local => Local(AltKind.Any2Any, capacity),
        EndKind.Remote => new RemoteSource(new RemotePeer<int>(capacity, Latency.None) { StealPerMille = stealPerMille }),
        EndKind.RemoteLagging => new RemoteSource(new RemotePeer<int>(capacity, Latency.Random) { StealPerMille = stealPerMille }),
        _ => throw new ArgumentOutOfRangeException(nameof(kind)),
    };

    /// <summary>A remote source with random latency whose ends learn readiness only when they ask, as a selection enables them.</summary>
    internal static TestSource LateReadiness(int capacity) => new RemoteSource(new RemotePeer<int>(capacity, Latency.Random), signalKnownReadinessOnEnable: false);

    /// <summary>A source and one reading end of it.</summary>
    internal static (TestSource Source, InputEnd End) Open(EndKind kind, int capacity = 0)
    {
        TestSource source = Create(kind, capacity);
        return (source, source.CreateEnd());
    }

    /// <summary>A channel of <paramref name="kind"/>: ends as <see cref="AltChannels.InFor"/> gives them.</summary>
    internal static TestSource Local(AltKind kind, int capacity = 0) => new LocalSource(AltChannels.Create<int>(kind, capacity), kind);

    /// <summary>
    /// Completes once <paramref name="end"/> knows it is ready: at once for a local end, when the
    /// peer's push has arrived for a remote one. After it, a ready remote end signals as soon as a
    /// selection enables it, so PriSelect and FairSelect order among remote ends is deterministic.
    /// </summary>
    internal static Task ReadyKnown(InputEnd end) => end.Guard is DelayedChannelEnd<int> remote ? remote.ReadyKnown : Task.CompletedTask;

    /// <summary>A reading end for one process.</summary>
    internal abstract InputEnd CreateEnd();

    internal abstract void Write(int value);

    internal abstract ValueTask WriteAsync(int value, CancellationToken cancellationToken = default);

    internal abstract void Poison();

    private sealed class LocalSource(CspChannel<int> channel, AltKind kind) : TestSource
    {
        internal override bool IsRemote => false;

        internal override InputEnd CreateEnd() => AltChannels.InFor(channel, kind);

        internal override void Write(int value) => channel.Write(value);

        internal override ValueTask WriteAsync(int value, CancellationToken cancellationToken = default) => channel.WriteAsync(value, cancellationToken);

        internal override void Poison() => channel.Poison();
    }

    private sealed class RemoteSource(RemotePeer<int> peer, bool signalKnownReadinessOnEnable = true) : TestSource
    {
        internal override bool IsRemote => true;

        internal override InputEnd CreateEnd()
        {
            DelayedChannelEnd<int> end = peer.CreateEnd(signalKnownReadinessOnEnable);
            return new InputEnd(end, end);
        }

        internal override void Write(int value) => peer.Write(value);

        internal override ValueTask WriteAsync(int value, CancellationToken cancellationToken = default) => peer.WriteAsync(value, cancellationToken);

        internal override void Poison() => peer.Poison();
    }
}

/// <summary>Theory data of the contract scenarios.</summary>
public static class ContractData
{
    /// <summary>Every kind of end.</summary>
    public static TheoryData<EndKind> Kinds() => [.. Enum.GetValues<EndKind>()];

    /// <summary>The remote kinds.</summary>
    public static TheoryData<EndKind> RemoteKinds() => [EndKind.Remote, EndKind.RemoteLagging];

    /// <summary>Every pair of kinds: two sources, one alternative.</summary>
    public static TheoryData<EndKind, EndKind> Pairs()
    {
        var data = new TheoryData<EndKind, EndKind>();
        foreach (EndKind a in Enum.GetValues<EndKind>())
        {
            foreach (EndKind b in Enum.GetValues<EndKind>())
            {
                data.Add(a, b);
            }
        }

        return data;
    }
}
