using System;
using CspNet.NameServer.Internal.StatusReporting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;

namespace Microsoft.AspNetCore.Builder;

/// <summary>Maps the CspNet NameServer's status page.</summary>
public static class NameServerStatusEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the status page (HTML, reloading itself) to <paramref name="path"/> and its JSON twin to
    /// <paramref name="path"/><c>.json</c>: names with where they live and their lease's age, worker
    /// pools with free and busy workers, and recent failures.
    /// </summary>
    /// <param name="endpoints">The endpoint route builder.</param>
    /// <param name="path">Where the page lives; default <c>/status</c>.</param>
    /// <returns>A builder for both endpoints, for conventions such as <c>RequireHost</c>.</returns>
    /// <remarks>
    /// Browsers need HTTP/1.1 (HTTP/2 only with TLS), so serve the page from an endpoint whose
    /// protocols include HTTP/1.1, not from the NameServer's HTTP/2-only one. The page answers only
    /// loopback callers when the NameServer has no cluster key, and asks for the key when it has one.
    /// </remarks>
    /// <exception cref="InvalidOperationException"><c>AddCspNameServer</c> was not called.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is <c>/</c>, does not start with <c>/</c> or ends with one.</exception>
    public static IEndpointConventionBuilder MapCspNameServerStatus(this IEndpointRouteBuilder endpoints, string path = "/status")
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentNullException.ThrowIfNull(path);
        if (path.Length < 2 || !path.StartsWith('/') || path.EndsWith('/'))
        {
            throw new ArgumentException($"The status page's path '{path}' must start with '/', name something and not end with '/', e.g. \"/status\".", nameof(path));
        }

        StatusPage page = endpoints.ServiceProvider.GetService<StatusPage>()
            ?? throw new InvalidOperationException("The NameServer's services are missing: call services.AddCspNameServer() when configuring services.");
        RouteGroupBuilder group = endpoints.MapGroup("");
        string jsonLink = path[(path.LastIndexOf('/') + 1)..] + ".json";
        group.MapGet(path, context => page.HtmlAsync(context, jsonLink));
        group.MapGet(path + ".json", page.JsonAsync);
        return group;
    }
}
