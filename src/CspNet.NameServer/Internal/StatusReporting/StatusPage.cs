using System;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Options;

namespace CspNet.NameServer.Internal.StatusReporting;

/// <summary>Serves the status page and its JSON twin: check the caller, take a snapshot, render it.</summary>
internal sealed class StatusPage(
    INameRegistry registry,
    RecentFailures failures,
    TimeProvider time,
    IOptions<NameServerOptions> nameServer,
    IOptions<NameServerStatusPageOptions> page)
{
    /// <summary>The most names (and pools) one page shows; the totals are always shown.</summary>
    internal const int MaxRows = 1000;

    // No script may run on the page, whatever a name contains; styles are inline.
    private const string ContentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

    internal StatusSnapshot Snapshot() => new(
        time.GetUtcNow(),
        registry is InMemoryNameRegistry inMemory ? inMemory.Snapshot(MaxRows) : null,
        failures.Snapshot(),
        failures.Total,
        page.Value.Refresh);

    /// <param name="context">The request.</param>
    /// <param name="jsonLink">The JSON twin's address relative to the page.</param>
    internal Task HtmlAsync(HttpContext context, string jsonLink) =>
        ServeAsync(context, "text/html; charset=utf-8", snapshot => System.Text.Encoding.UTF8.GetBytes(StatusPageRenderer.Render(snapshot, jsonLink)));

    internal Task JsonAsync(HttpContext context) =>
        ServeAsync(context, "application/json; charset=utf-8", StatusJson.Render);

    private async Task ServeAsync(HttpContext context, string contentType, Func<StatusSnapshot, byte[]> render)
    {
        HttpResponse response = context.Response;
        response.Headers.CacheControl = "no-store";
        response.Headers.XContentTypeOptions = "nosniff";
        response.Headers.ContentSecurityPolicy = ContentSecurityPolicy;
        response.Headers["Referrer-Policy"] = "no-referrer";
        if (StatusPageAccess.Refusal(context, nameServer.Value.ClusterKey) is { } refusal)
        {
            response.StatusCode = refusal.Status;
            if (refusal.Status == StatusCodes.Status401Unauthorized)
            {
                response.Headers.WWWAuthenticate = "Basic realm=\"" + StatusPageAccess.Realm + "\", charset=\"UTF-8\"";
            }

            response.ContentType = "text/plain; charset=utf-8";
            await response.WriteAsync(refusal.Message + "\n", context.RequestAborted).ConfigureAwait(false);
            return;
        }

        StatusSnapshot snapshot;
        try
        {
            snapshot = Snapshot();
        }
        catch (ObjectDisposedException)
        {
            response.StatusCode = StatusCodes.Status503ServiceUnavailable;
            response.ContentType = "text/plain; charset=utf-8";
            await response.WriteAsync("The NameServer is shutting down.\n", context.RequestAborted).ConfigureAwait(false);
            return;
        }

        byte[] body = render(snapshot);
        response.ContentType = contentType;
        response.ContentLength = body.Length;
        await response.Body.WriteAsync(body, context.RequestAborted).ConfigureAwait(false);
    }
}
