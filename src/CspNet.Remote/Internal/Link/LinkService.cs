using System.Threading.Tasks;
using CspNet.Remote.Protocol;
using Grpc.Core;

namespace CspNet.Remote.Internal;

/// <summary>The gRPC Link service of a program: one <see cref="HomeSession"/> per client stream.</summary>
internal sealed class LinkService(NodeRuntime node) : Link.LinkBase
{
    public override Task Connect(IAsyncStreamReader<ClientFrame> requestStream, IServerStreamWriter<HomeFrame> responseStream, ServerCallContext context) =>
        new HomeSession(node).RunAsync(requestStream, responseStream, context.CancellationToken);
}
