using System;
using CspNet.NameServer;
using CspNet.NameServer.Internal;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;

namespace Microsoft.AspNetCore.Builder;

/// <summary>Maps the CspNet NameServer's gRPC service.</summary>
public static class NameServerEndpointRouteBuilderExtensions
{
    /// <summary>Maps the NameServer protocol (package <c>cspnet.nameserver.v1</c>) to <paramref name="endpoints"/>.</summary>
    /// <param name="endpoints">The endpoint route builder.</param>
    /// <returns>
    /// A builder for the service's endpoints, as grpc-dotnet's <c>MapGrpcService</c> returns, so that
    /// callers can add conventions such as <c>RequireAuthorization</c> or <c>RequireHost</c>.
    /// </returns>
    /// <exception cref="InvalidOperationException"><c>AddCspNameServer</c> was not called.</exception>
    public static GrpcServiceEndpointConventionBuilder MapCspNameServer(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        if (endpoints.ServiceProvider.GetService(typeof(INameRegistry)) is null)
        {
            throw new InvalidOperationException("The NameServer's services are missing: call services.AddCspNameServer() when configuring services.");
        }

        return endpoints.MapGrpcService<NameServerService>();
    }
}
