using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Client;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Serialization;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;
using CspNet.Remote.Protocol;

namespace CspNet.Remote;

// The named channel getters, one pair (blocking, async) per end of each kind. Each end's doc
// says whether it creates the channel (and so hosts it here) or waits for it to exist.
[System.Diagnostics.CodeAnalysis.SuppressMessage("ApiDesign", "RS0026", Justification = "The getters follow the paper's CSP.NET API: overloads with and without a buffer or an enrolment count, each ending in optional flags and a CancellationToken. They differ in required parameters, so no call is ambiguous.")]
public sealed partial class CspNode
{
    /// <summary>Gets the reading end of the named One2One channel <paramref name="name"/>. Creates the channel (this program hosts it): the name must not exist yet.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelIn<T> GetOne2OneIn<T>(string name, IBuffer<T>? buffer = null, bool local = false) =>
        Wait(GetOne2OneInAsync<T>(name, buffer, local, CancellationToken.None), "GetOne2OneIn");

    /// <summary>Gets the reading end of the named One2One channel without holding a thread while it waits. Creates the channel (this program hosts it): the name must not exist yet.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelIn<T>> GetOne2OneInAsync<T>(string name, IBuffer<T>? buffer = null, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelIn<T>)await GetChannelEndAsync<T>(name, NameKind.One2One, reader: true, buffer, local, cancellationToken).ConfigureAwait(false);

    /// <summary>Gets the writing end of the named One2One channel <paramref name="name"/>. Waits until the program holding the other end has created the channel.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelOut<T> GetOne2OneOut<T>(string name, bool local = false) =>
        Wait(GetOne2OneOutAsync<T>(name, local, CancellationToken.None), "GetOne2OneOut");

    /// <summary>Gets the writing end of the named One2One channel without holding a thread while it waits. Waits until the program holding the other end has created the channel.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelOut<T>> GetOne2OneOutAsync<T>(string name, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelOut<T>)await GetChannelEndAsync<T>(name, NameKind.One2One, reader: false, null, local, cancellationToken).ConfigureAwait(false);

    /// <summary>Gets the reading end of the named Any2One channel <paramref name="name"/>. Creates the channel (this program hosts it): the name must not exist yet.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelIn<T> GetAny2OneIn<T>(string name, IBuffer<T>? buffer = null, bool local = false) =>
        Wait(GetAny2OneInAsync<T>(name, buffer, local, CancellationToken.None), "GetAny2OneIn");

    /// <summary>Gets the reading end of the named Any2One channel without holding a thread while it waits. Creates the channel (this program hosts it): the name must not exist yet.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelIn<T>> GetAny2OneInAsync<T>(string name, IBuffer<T>? buffer = null, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelIn<T>)await GetChannelEndAsync<T>(name, NameKind.Any2One, reader: true, buffer, local, cancellationToken).ConfigureAwait(false);

    /// <summary>Gets the writing end of the named Any2One channel <paramref name="name"/>. Waits until the program holding the other end has created the channel.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelOut<T> GetAny2OneOut<T>(string name, bool local = false) =>
        Wait(GetAny2OneOutAsync<T>(name, local, CancellationToken.None), "GetAny2OneOut");

    /// <summary>Gets the writing end of the named Any2One channel without holding a thread while it waits. Waits until the program holding the other end has created the channel.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelOut<T>> GetAny2OneOutAsync<T>(string name, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelOut<T>)await GetChannelEndAsync<T>(name, NameKind.Any2One, reader: false, null, local, cancellationToken).ConfigureAwait(false);

    /// <summary>Gets the reading end of the named One2Any channel <paramref name="name"/>. Waits until the program holding the other end has created the channel.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelIn<T> GetOne2AnyIn<T>(string name, bool local = false) =>
        Wait(GetOne2AnyInAsync<T>(name, local, CancellationToken.None), "GetOne2AnyIn");

    /// <summary>Gets the reading end of the named One2Any channel without holding a thread while it waits. Waits until the program holding the other end has created the channel.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelIn<T>> GetOne2AnyInAsync<T>(string name, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelIn<T>)await GetChannelEndAsync<T>(name, NameKind.One2Any, reader: true, null, local, cancellationToken).ConfigureAwait(false);

    /// <summary>Gets the writing end of the named One2Any channel <paramref name="name"/>. Creates the channel (this program hosts it): the name must not exist yet.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelOut<T> GetOne2AnyOut<T>(string name, IBuffer<T>? buffer = null, bool local = false) =>
        Wait(GetOne2AnyOutAsync<T>(name, buffer, local, CancellationToken.None), "GetOne2AnyOut");

    /// <summary>Gets the writing end of the named One2Any channel without holding a thread while it waits. Creates the channel (this program hosts it): the name must not exist yet.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelOut<T>> GetOne2AnyOutAsync<T>(string name, IBuffer<T>? buffer = null, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelOut<T>)await GetChannelEndAsync<T>(name, NameKind.One2Any, reader: false, buffer, local, cancellationToken).ConfigureAwait(false);

    /// <summary>Gets the reading end of the named Any2Any channel <paramref name="name"/>. The first program to ask for either end of the name hosts the channel (with <paramref name="buffer"/>, if given); later ones join it.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelIn<T> GetAny2AnyIn<T>(string name, IBuffer<T>? buffer = null, bool local = false) =>
        Wait(GetAny2AnyInAsync<T>(name, buffer, local, CancellationToken.None), "GetAny2AnyIn");

    /// <summary>Gets the reading end of the named Any2Any channel without holding a thread while it waits. The first program to ask for either end of the name hosts the channel (with <paramref name="buffer"/>, if given); later ones join it.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelIn<T>> GetAny2AnyInAsync<T>(string name, IBuffer<T>? buffer = null, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelIn<T>)await GetChannelEndAsync<T>(name, NameKind.Any2Any, reader: true, buffer, local, cancellationToken).ConfigureAwait(false);

    /// <summary>Gets the writing end of the named Any2Any channel <paramref name="name"/>. The first program to ask for either end of the name hosts the channel (with <paramref name="buffer"/>, if given); later ones join it.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer (paper section 3.2).</param>
    /// <returns>The end.</returns>
    public AltingChannelOut<T> GetAny2AnyOut<T>(string name, IBuffer<T>? buffer = null, bool local = false) =>
        Wait(GetAny2AnyOutAsync<T>(name, buffer, local, CancellationToken.None), "GetAny2AnyOut");

    /// <summary>Gets the writing end of the named Any2Any channel without holding a thread while it waits. The first program to ask for either end of the name hosts the channel (with <paramref name="buffer"/>, if given); later ones join it.</summary>
    /// <typeparam name="T">The type of the values carried; every end must agree.</typeparam>
    /// <param name="name">The channel's name, unique in the system.</param>
    /// <param name="buffer">The channel's buffer (null: unbuffered). Only the creating end sets it.</param>
    /// <param name="local">True: a channel private to this program, never registered with the NameServer.</param>
    /// <param name="cancellationToken">Stops waiting for the channel.</param>
    /// <returns>The end.</returns>
    public async ValueTask<AltingChannelOut<T>> GetAny2AnyOutAsync<T>(string name, IBuffer<T>? buffer = null, bool local = false, CancellationToken cancellationToken = default) =>
        (AltingChannelOut<T>)await GetChannelEndAsync<T>(name, NameKind.Any2Any, reader: false, buffer, local, cancellationToken).ConfigureAwait(false);

    private ValueTask<object> GetChannelEndAsync<T>(string name, NameKind kind, bool reader, IBuffer<T>? buffer, bool local, CancellationToken cancellationToken)
    {
        bool distributed = IsDistributed && !local;

        // Resolved here so that a type that cannot cross fails at the getter, not at the first write.
        ValueCodec<T>? codec = distributed ? CodecFor<T>(name) : null;
        string valueType = codec?.WireName ?? typeof(T).FullName ?? typeof(T).Name;
        var request = new EndRequest(name, kind, kind.CreatedBy(reader), valueType, reader ? Role.Reader : Role.Writer, local, buffer is null ? 0 : -1);
        long maxValueSize = _runtime.Options.MaxValueSize;
        return GetAsync<object>(
            request,
            () => new ChannelHome<T>(name, kind, buffer, request.BufferCapacity, codec, maxValueSize),
            home => home is ChannelHome<T> channel && home.Kind == kind
                ? Following(channel, channel.LocalEnd(reader, ProgramLabel), codec is null ? null : ct => AttachFollowerAsync(request, RemoteEnd, ct))
                : throw NameRules.Mismatch(home, kind, typeof(T)),
            RemoteEnd,
            cancellationToken);

        object RemoteEnd(PeerLink link, uint handle)
        {
            EndRoute route = RouteFor(request, link, handle, handover => ChannelHome<T>.ForHandover(handover, codec!, maxValueSize));
            return reader
                ? new RemoteChannelIn<T>(route, codec!, name)
                : new RemoteChannelOut<T>(route, codec!, name, maxValueSize);
        }
    }

    private ValueCodec<T> CodecFor<T>(string name)
    {
        try
        {
            return ValueCodec<T>.Get();
        }
        catch (NotSupportedException e)
        {
            throw new NotSupportedException($"The channel '{name}' of the program '{ProgramLabel}' cannot carry its values to other programs. {e.Message}", e);
        }
    }

    // ---- barriers and buckets ------------------------------------------------------------------

    /// <summary>Creates the named barrier <paramref name="name"/>, hosted by this program, for <paramref name="enrolled"/> parties in all programs.</summary>
    /// <param name="name">The barrier's name, unique in the system.</param>
    /// <param name="enrolled">How many Syncs open the barrier each time, counting parties in every program.</param>
    /// <param name="local">True: a barrier private to this program.</param>
    /// <returns>A party of the barrier.</returns>
    public NamedBarrier GetBarrier(string name, int enrolled, bool local = false) =>
        Wait(GetBarrierAsync(name, enrolled, local, CancellationToken.None), "GetBarrier");

    /// <summary>Creates the named barrier <paramref name="name"/>; see <see cref="GetBarrier(string, int, bool)"/>.</summary>
    /// <param name="name">The barrier's name, unique in the system.</param>
    /// <param name="enrolled">How many Syncs open the barrier each time, counting parties in every program.</param>
    /// <param name="local">True: a barrier private to this program.</param>
    /// <param name="cancellationToken">Stops waiting for the NameServer.</param>
    /// <returns>A party of the barrier.</returns>
    public ValueTask<NamedBarrier> GetBarrierAsync(string name, int enrolled, bool local = false, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(enrolled);
        return GetBarrierCoreAsync(name, creates: true, enrolled, local, cancellationToken);
    }

    /// <summary>Joins the named barrier <paramref name="name"/>, waiting until the program that creates it has done so.</summary>
    /// <param name="name">The barrier's name.</param>
    /// <param name="local">True: a barrier private to this program.</param>
    /// <returns>A party of the barrier.</returns>
    public NamedBarrier GetBarrier(string name, bool local = false) =>
        Wait(GetBarrierAsync(name, local, CancellationToken.None), "GetBarrier");

    /// <summary>Joins the named barrier <paramref name="name"/> without holding a thread while it waits.</summary>
    /// <param name="name">The barrier's name.</param>
    /// <param name="local">True: a barrier private to this program.</param>
    /// <param name="cancellationToken">Stops waiting for the barrier.</param>
    /// <returns>A party of the barrier.</returns>
    public ValueTask<NamedBarrier> GetBarrierAsync(string name, bool local = false, CancellationToken cancellationToken = default) =>
        GetBarrierCoreAsync(name, creates: false, 0, local, cancellationToken);

    private ValueTask<NamedBarrier> GetBarrierCoreAsync(string name, bool creates, int enrolled, bool local, CancellationToken cancellationToken) =>
        GetAsync<NamedBarrier>(
            new EndRequest(name, NameKind.Barrier, creates, string.Empty, Role.Barrier, local, 0),
            () => new BarrierHome(name, enrolled),
            home => home is BarrierHome barrier ? new LocalNamedBarrier(name, barrier.Barrier) : throw NameRules.Mismatch(home, NameKind.Barrier, null),
            (link, handle) => new RemoteNamedBarrier(name, link, handle),
            cancellationToken);

    /// <summary>Gets the named bucket <paramref name="name"/>: the first program to ask hosts it, later ones join.</summary>
    /// <param name="name">The bucket's name, unique in the system.</param>
    /// <param name="local">True: a bucket private to this program.</param>
    /// <returns>The bucket.</returns>
    public NamedBucket GetBucket(string name, bool local = false) =>
        Wait(GetBucketAsync(name, local, CancellationToken.None), "GetBucket");

    /// <summary>Gets the named bucket <paramref name="name"/> without holding a thread while the NameServer answers.</summary>
    /// <param name="name">The bucket's name, unique in the system.</param>
    /// <param name="local">True: a bucket private to this program.</param>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>The bucket.</returns>
    public ValueTask<NamedBucket> GetBucketAsync(string name, bool local = false, CancellationToken cancellationToken = default) =>
        GetAsync<NamedBucket>(
            new EndRequest(name, NameKind.Bucket, Creates: true, string.Empty, Role.Bucket, local, 0),
            () => new BucketHome(name),
            home => home is BucketHome bucket ? new LocalNamedBucket(name, bucket.Bucket) : throw NameRules.Mismatch(home, NameKind.Bucket, null),
            (link, handle) => new RemoteNamedBucket(name, link, handle),
            cancellationToken);
}
