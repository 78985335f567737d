using System.Threading;
using System.Threading.Tasks;

namespace CspNet;

/// <summary>
/// The named getters of CSP.NET's <see cref="Factory"/>: <c>Factory.GetOne2OneIn&lt;int&gt;("plus")</c>
/// and the others, for channels, barriers and buckets found by name. They are static extension
/// members of <see cref="Factory"/> (the core knows nothing of names) and use the node chosen by
/// <see cref="CspManager"/>: shared with other programs after <c>CspManager.Init</c>, local after
/// <c>CspManager.InitStandAlone</c>.
/// </summary>
/// <remarks>
/// The end that creates a channel is its One end (see <see cref="Remote.CspNode"/>): the reading
/// end of One2One and Any2One, the writing end of One2Any; for Any2Any and buckets whichever is
/// asked for first. The other ends wait for the name to appear. Each blocking getter has an async
/// twin that waits without holding a thread. The <c>local</c> overloads make a construct private
/// to this program even in a distributed one (paper section 3.2).
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("ApiDesign", "RS0026", Justification = "The getters follow the paper's CSP.NET API: overloads with and without a buffer or an enrolment count, each ending in optional flags and a CancellationToken. They differ in required parameters, so no call is ambiguous.")]
public static class NamedFactory
{
    extension(Factory)
    {
        /// <summary>Gets the reading end of the named One2One channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetOne2OneIn{T}(string, IBuffer{T}, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetOne2OneIn<T>(string name) => CspManager.Node.GetOne2OneIn<T>(name);

        /// <summary>Gets the reading end of the named One2One channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetOne2OneIn<T>(string name, bool local) => CspManager.Node.GetOne2OneIn<T>(name, local: local);

        /// <summary>Gets the reading end of the named One2One channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelIn<T>> GetOne2OneInAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetOne2OneInAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the reading end of the named buffered One2One channel <paramref name="name"/>, creating it with <paramref name="buffer"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetOne2OneIn<T>(string name, IBuffer<T> buffer) => CspManager.Node.GetOne2OneIn<T>(name, buffer);

        /// <summary>Gets the reading end of the named buffered One2One channel <paramref name="name"/> without holding a thread.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelIn<T>> GetOne2OneInAsync<T>(string name, IBuffer<T> buffer, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetOne2OneInAsync<T>(name, buffer, cancellationToken: cancellationToken);

        /// <summary>Gets the writing end of the named One2One channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetOne2OneOut{T}(string, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetOne2OneOut<T>(string name) => CspManager.Node.GetOne2OneOut<T>(name);

        /// <summary>Gets the writing end of the named One2One channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetOne2OneOut<T>(string name, bool local) => CspManager.Node.GetOne2OneOut<T>(name, local: local);

        /// <summary>Gets the writing end of the named One2One channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelOut<T>> GetOne2OneOutAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetOne2OneOutAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the reading end of the named Any2One channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetAny2OneIn{T}(string, IBuffer{T}, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetAny2OneIn<T>(string name) => CspManager.Node.GetAny2OneIn<T>(name);

        /// <summary>Gets the reading end of the named Any2One channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetAny2OneIn<T>(string name, bool local) => CspManager.Node.GetAny2OneIn<T>(name, local: local);

        /// <summary>Gets the reading end of the named Any2One channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelIn<T>> GetAny2OneInAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetAny2OneInAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the reading end of the named buffered Any2One channel <paramref name="name"/>, creating it with <paramref name="buffer"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetAny2OneIn<T>(string name, IBuffer<T> buffer) => CspManager.Node.GetAny2OneIn<T>(name, buffer);

        /// <summary>Gets the reading end of the named buffered Any2One channel <paramref name="name"/> without holding a thread.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelIn<T>> GetAny2OneInAsync<T>(string name, IBuffer<T> buffer, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetAny2OneInAsync<T>(name, buffer, cancellationToken: cancellationToken);

        /// <summary>Gets the writing end of the named Any2One channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetAny2OneOut{T}(string, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetAny2OneOut<T>(string name) => CspManager.Node.GetAny2OneOut<T>(name);

        /// <summary>Gets the writing end of the named Any2One channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetAny2OneOut<T>(string name, bool local) => CspManager.Node.GetAny2OneOut<T>(name, local: local);

        /// <summary>Gets the writing end of the named Any2One channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelOut<T>> GetAny2OneOutAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetAny2OneOutAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the reading end of the named One2Any channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetOne2AnyIn{T}(string, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetOne2AnyIn<T>(string name) => CspManager.Node.GetOne2AnyIn<T>(name);

        /// <summary>Gets the reading end of the named One2Any channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetOne2AnyIn<T>(string name, bool local) => CspManager.Node.GetOne2AnyIn<T>(name, local: local);

        /// <summary>Gets the reading end of the named One2Any channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelIn<T>> GetOne2AnyInAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetOne2AnyInAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the writing end of the named One2Any channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetOne2AnyOut{T}(string, IBuffer{T}, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetOne2AnyOut<T>(string name) => CspManager.Node.GetOne2AnyOut<T>(name);

        /// <summary>Gets the writing end of the named One2Any channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetOne2AnyOut<T>(string name, bool local) => CspManager.Node.GetOne2AnyOut<T>(name, local: local);

        /// <summary>Gets the writing end of the named One2Any channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelOut<T>> GetOne2AnyOutAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetOne2AnyOutAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the writing end of the named buffered One2Any channel <paramref name="name"/>, creating it with <paramref name="buffer"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetOne2AnyOut<T>(string name, IBuffer<T> buffer) => CspManager.Node.GetOne2AnyOut<T>(name, buffer);

        /// <summary>Gets the writing end of the named buffered One2Any channel <paramref name="name"/> without holding a thread.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelOut<T>> GetOne2AnyOutAsync<T>(string name, IBuffer<T> buffer, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetOne2AnyOutAsync<T>(name, buffer, cancellationToken: cancellationToken);

        /// <summary>Gets the reading end of the named Any2Any channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetAny2AnyIn{T}(string, IBuffer{T}, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetAny2AnyIn<T>(string name) => CspManager.Node.GetAny2AnyIn<T>(name);

        /// <summary>Gets the reading end of the named Any2Any channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetAny2AnyIn<T>(string name, bool local) => CspManager.Node.GetAny2AnyIn<T>(name, local: local);

        /// <summary>Gets the reading end of the named Any2Any channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelIn<T>> GetAny2AnyInAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetAny2AnyInAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the reading end of the named buffered Any2Any channel <paramref name="name"/>, creating it with <paramref name="buffer"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <returns>The end.</returns>
        public static AltingChannelIn<T> GetAny2AnyIn<T>(string name, IBuffer<T> buffer) => CspManager.Node.GetAny2AnyIn<T>(name, buffer);

        /// <summary>Gets the reading end of the named buffered Any2Any channel <paramref name="name"/> without holding a thread.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelIn<T>> GetAny2AnyInAsync<T>(string name, IBuffer<T> buffer, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetAny2AnyInAsync<T>(name, buffer, cancellationToken: cancellationToken);

        /// <summary>Gets the writing end of the named Any2Any channel <paramref name="name"/>; see <see cref="Remote.CspNode.GetAny2AnyOut{T}(string, IBuffer{T}, bool)"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetAny2AnyOut<T>(string name) => CspManager.Node.GetAny2AnyOut<T>(name);

        /// <summary>Gets the writing end of the named Any2Any channel <paramref name="name"/>, optionally private to this program.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="local">True: never registered with the NameServer, as if stand-alone.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetAny2AnyOut<T>(string name, bool local) => CspManager.Node.GetAny2AnyOut<T>(name, local: local);

        /// <summary>Gets the writing end of the named Any2Any channel <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelOut<T>> GetAny2AnyOutAsync<T>(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetAny2AnyOutAsync<T>(name, cancellationToken: cancellationToken);

        /// <summary>Gets the writing end of the named buffered Any2Any channel <paramref name="name"/>, creating it with <paramref name="buffer"/>.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <returns>The end.</returns>
        public static AltingChannelOut<T> GetAny2AnyOut<T>(string name, IBuffer<T> buffer) => CspManager.Node.GetAny2AnyOut<T>(name, buffer);

        /// <summary>Gets the writing end of the named buffered Any2Any channel <paramref name="name"/> without holding a thread.</summary>
        /// <typeparam name="T">The type of the values carried.</typeparam>
        /// <param name="name">The channel's name.</param>
        /// <param name="buffer">The channel's buffer; it lives with the channel.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The end.</returns>
        public static ValueTask<AltingChannelOut<T>> GetAny2AnyOutAsync<T>(string name, IBuffer<T> buffer, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetAny2AnyOutAsync<T>(name, buffer, cancellationToken: cancellationToken);

        /// <summary>Creates the named barrier <paramref name="name"/> for <paramref name="enrolled"/> parties in all programs; this program hosts it.</summary>
        /// <param name="name">The barrier's name.</param>
        /// <param name="enrolled">How many Syncs open the barrier, counting every program's parties.</param>
        /// <returns>A party of the barrier.</returns>
        public static NamedBarrier GetBarrier(string name, int enrolled) => CspManager.Node.GetBarrier(name, enrolled);

        /// <summary>Joins the named barrier <paramref name="name"/>, waiting for it to be created.</summary>
        /// <param name="name">The barrier's name.</param>
        /// <returns>A party of the barrier.</returns>
        public static NamedBarrier GetBarrier(string name) => CspManager.Node.GetBarrier(name);

        /// <summary>Creates the named barrier <paramref name="name"/> without holding a thread.</summary>
        /// <param name="name">The barrier's name.</param>
        /// <param name="enrolled">How many Syncs open the barrier, counting every program's parties.</param>
        /// <param name="cancellationToken">Stops waiting for the NameServer.</param>
        /// <returns>A party of the barrier.</returns>
        public static ValueTask<NamedBarrier> GetBarrierAsync(string name, int enrolled, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetBarrierAsync(name, enrolled, cancellationToken: cancellationToken);

        /// <summary>Joins the named barrier <paramref name="name"/> without holding a thread while it waits.</summary>
        /// <param name="name">The barrier's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>A party of the barrier.</returns>
        public static ValueTask<NamedBarrier> GetBarrierAsync(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetBarrierAsync(name, cancellationToken: cancellationToken);

        /// <summary>Gets the named bucket <paramref name="name"/>: the first program to ask hosts it.</summary>
        /// <param name="name">The bucket's name.</param>
        /// <returns>The bucket.</returns>
        public static NamedBucket GetBucket(string name) => CspManager.Node.GetBucket(name);

        /// <summary>Gets the named bucket <paramref name="name"/> without holding a thread.</summary>
        /// <param name="name">The bucket's name.</param>
        /// <param name="cancellationToken">Stops waiting.</param>
        /// <returns>The bucket.</returns>
        public static ValueTask<NamedBucket> GetBucketAsync(string name, CancellationToken cancellationToken = default) =>
            CspManager.Node.GetBucketAsync(name, cancellationToken: cancellationToken);
    }
}
