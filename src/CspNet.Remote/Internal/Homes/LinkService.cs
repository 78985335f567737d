using System.Threading.Tasks;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.Protocol;
using Grpc.Core;

namespace CspNet.Remote.Internal.Homes;

/// <summary>The gRPC Link service of a program: one <see cref="HomeSession"/> per client stream.</summary>
internal sealed class LinkService(IHomeNode node) : LinkServiceBase
{
    public override Task Connect(IAsyncStreamReader<ClientFrame> requestStream, IServerStreamWriter<HomeFrame> responseStream, ServerCallContext context) =>
        new HomeSession(node).RunAsync(requestStream, responseStream, context.CancellationToken);
}

/// <summary>
/// The Link service bound with <see cref="LinkMarshaller"/> instead of the generated marshallers
/// (the generated <c>Link.LinkBase</c> would bind its own). grpc-dotnet finds the binder through
/// <see cref="BindServiceMethodAttribute"/>, as it does for generated bases.
/// </summary>
[BindServiceMethod(typeof(LinkServiceBase), nameof(BindService))]
internal abstract class LinkServiceBase
{
    /// <summary>link.proto's <c>Connect</c>: one client program's stream.</summary>
    /// <param name="requestStream">The client's frames.</param>
    /// <param name="responseStream">Where this program's answers go.</param>
    /// <param name="context">The call.</param>
    /// <returns>Completes when the stream ends.</returns>
    public abstract Task Connect(IAsyncStreamReader<ClientFrame> requestStream, IServerStreamWriter<HomeFrame> responseStream, ServerCallContext context);

    /// <summary>Binds <c>Connect</c> (grpc-dotnet calls this with a null service to learn the methods).</summary>
    /// <param name="binder">The server's binder.</param>
    /// <param name="service">The service, or null.</param>
    public static void BindService(ServiceBinderBase binder, LinkServiceBase? service)
    {
        System.ArgumentNullException.ThrowIfNull(binder);
        binder.AddMethod(LinkMarshaller.Shared.Connect, service is null ? null : new DuplexStreamingServerMethod<ClientFrame, HomeFrame>(service.Connect));
    }
}
