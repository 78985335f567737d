using System;
using System.Globalization;
using System.Text;
using System.Text.Encodings.Web;

namespace CspNet.NameServer.Internal.StatusReporting;

/// <summary>
/// Renders a <see cref="StatusSnapshot"/> as a self-contained HTML page without scripts: names,
/// worker pools and recent failures, reloaded by a meta refresh.
/// </summary>
/// <remarks>
/// Every value from a snapshot passes through <see cref="HtmlEncoder"/>: names, labels, hosts and
/// reasons come from remote callers. The page also carries no script at all, and the endpoint
/// sends a Content-Security-Policy that forbids scripts, so a missed encoding could not run one.
/// </remarks>
internal static class StatusPageRenderer
{
    private const string Style =
        "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}" +
        "h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}" +
        "p.summary{color:#555;margin:0}" +
        "table{border-collapse:collapse;min-width:40em}" +
        "th,td{text-align:left;padding:.25em .8em .25em 0;border-bottom:1px solid #ddd;vertical-align:top;white-space:nowrap}" +
        "td.reason{white-space:normal}" +
        "th{font-weight:600;color:#444}td.num,th.num{text-align:right}" +
        "td.none{color:#888;font-style:italic}code{font-size:13px}" +
        "tr.LeaseExpired td.kind,tr.PoolLost td.kind{color:#a15c00}" +
        "tr.Refused td.kind,tr.Unauthenticated td.kind,tr.Full td.kind{color:#b00020}";

    /// <param name="snapshot">What to show.</param>
    /// <param name="jsonLink">The JSON twin's address relative to the page (its last path segment), linked at the end.</param>
    internal static string Render(StatusSnapshot snapshot, string jsonLink = "status.json")
    {
        ArgumentNullException.ThrowIfNull(snapshot);
        var html = new StringBuilder(4096);
        long refreshSeconds = (long)snapshot.Refresh.TotalSeconds;
        html.Append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
            .Append("<meta http-equiv=\"refresh\" content=\"").Append(Invariant(refreshSeconds)).Append("\">")
            .Append("<meta name=\"viewport\" content=\"width=device-width\">")
            .Append("<title>CspNet NameServer</title><style>").Append(Style).Append("</style></head>\n<body>\n")
            .Append("<h1>CspNet NameServer</h1>\n<p class=\"summary\" id=\"summary\">As of ")
            .Append(Time(snapshot.TakenAt));
        RegistrySnapshot? registry = snapshot.Registry;
        if (registry is not null)
        {
            html.Append(" · ").Append(Count(registry.LeaseCount, "program")).Append(" with a lease · ")
                .Append(Count(registry.NameCount, "name")).Append(" · ").Append(Count(registry.PoolCount, "worker pool"))
                .Append(" · leases live ").Append(Duration(registry.LeaseTtl)).Append(" without renewal");
        }

        html.Append(" · this page reloads every ").Append(Duration(snapshot.Refresh)).Append(".</p>\n");
        if (registry is null)
        {
            html.Append("<p>This NameServer's registry is not an InMemoryNameRegistry and cannot list its names; only failures are shown.</p>\n");
        }
        else
        {
            Names(html, registry);
            Pools(html, registry);
        }

        Failures(html, snapshot);

        // Last on the page, so a reader (the browser test) can tell a complete page from one still loading.
        html.Append("<p class=\"summary\" id=\"end\">The same as JSON: <a href=\"").Append(Encode(jsonLink)).Append("\">")
            .Append(Encode(jsonLink)).Append("</a></p>\n</body></html>\n");
        return html.ToString();
    }

    /// <summary>A duration as a person reads it: <c>850 ms</c>, <c>2.4 s</c>, <c>12 s</c>, <c>3 min 05 s</c>, <c>2 h 07 min</c>, <c>3 d 4 h</c>.</summary>
    internal static string Duration(TimeSpan span)
    {
        if (span < TimeSpan.Zero)
        {
            span = TimeSpan.Zero;
        }

        return span.TotalSeconds switch
        {
            < 1 => Invariant((long)span.TotalMilliseconds) + " ms",
            < 10 => span.TotalSeconds.ToString("0.#", CultureInfo.InvariantCulture) + " s",
            < 60 => Invariant((long)span.TotalSeconds) + " s",
            < 3600 => Invariant((long)span.TotalMinutes) + " min " + span.Seconds.ToString("00", CultureInfo.InvariantCulture) + " s",
            < 86400 => Invariant((long)span.TotalHours) + " h " + span.Minutes.ToString("00", CultureInfo.InvariantCulture) + " min",
            _ => Invariant((long)span.TotalDays) + " d " + Invariant(span.Hours) + " h",
        };
    }

    private static void Names(StringBuilder html, RegistrySnapshot registry)
    {
        html.Append("<h2>Names</h2>\n");
        Shown(html, registry.Names.Count, registry.NameCount, "names");
        html.Append("<table id=\"names\"><thead><tr><th>name</th><th>kind</th><th>value type</th><th class=\"num\">buffer</th>")
            .Append("<th>program</th><th>where</th><th class=\"num\">lease age</th><th class=\"num\">expires in</th></tr></thead><tbody>\n");
        foreach (StatusName row in registry.Names)
        {
            html.Append("<tr><td class=\"name\"><code>").Append(Encode(row.Entry.Name)).Append("</code></td><td class=\"kind\">")
                .Append(Encode(row.Entry.Kind.ToString())).Append("</td><td>").Append(Encode(row.Entry.ValueType))
                .Append("</td><td class=\"num\">").Append(Buffer(row.Entry.BufferCapacity)).Append("</td><td class=\"program\">")
                .Append(Encode(row.Program)).Append("</td><td class=\"where\">").Append(Encode(row.Entry.Endpoint?.ToString() ?? ""))
                .Append("</td><td class=\"num lease-age\">").Append(Duration(row.LeaseAge))
                .Append("</td><td class=\"num\">").Append(Duration(row.ExpiresIn)).Append("</td></tr>\n");
        }

        None(html, registry.Names.Count, 8, "No names are registered.");
        html.Append("</tbody></table>\n");
    }

    private static void Pools(StringBuilder html, RegistrySnapshot registry)
    {
        html.Append("<h2>Worker pools</h2>\n");
        Shown(html, registry.Pools.Count, registry.PoolCount, "pools");
        html.Append("<table id=\"pools\"><thead><tr><th>pool</th><th>address</th><th class=\"num\">workers</th><th class=\"num\">free</th>")
            .Append("<th class=\"num\">busy</th><th>program</th><th class=\"num\">lease age</th><th class=\"num\">expires in</th></tr></thead><tbody>\n");
        foreach (StatusPool row in registry.Pools)
        {
            html.Append("<tr><td class=\"name\">").Append(Encode(row.Pool.Name)).Append("</td><td>").Append(Encode(row.Pool.Uri.ToString()))
                .Append("</td><td class=\"num workers\">").Append(Invariant(row.Pool.Workers))
                .Append("</td><td class=\"num free\">").Append(Invariant(row.Pool.FreeWorkers))
                .Append("</td><td class=\"num busy\">").Append(Invariant(row.Pool.Workers - row.Pool.FreeWorkers))
                .Append("</td><td class=\"program\">").Append(Encode(row.Program))
                .Append("</td><td class=\"num lease-age\">").Append(Duration(row.LeaseAge))
                .Append("</td><td class=\"num\">").Append(Duration(row.ExpiresIn)).Append("</td></tr>\n");
        }

        None(html, registry.Pools.Count, 8, "No worker pools are registered.");
        html.Append("</tbody></table>\n");
    }

    private static void Failures(StringBuilder html, StatusSnapshot snapshot)
    {
        html.Append("<h2>Recent failures</h2>\n");
        if (snapshot.FailureTotal > snapshot.Failures.Count)
        {
            html.Append("<p class=\"summary\">The last ").Append(Invariant(snapshot.Failures.Count)).Append(" of ")
                .Append(Invariant(snapshot.FailureTotal)).Append(" since the NameServer started.</p>\n");
        }

        html.Append("<table id=\"failures\"><thead><tr><th>time (UTC)</th><th class=\"num\">ago</th><th>what</th><th>reason</th></tr></thead><tbody>\n");
        foreach (FailureRecord failure in snapshot.Failures)
        {
            html.Append("<tr class=\"").Append(failure.Kind.ToString()).Append("\"><td>").Append(Time(failure.Time))
                .Append("</td><td class=\"num\">").Append(Duration(snapshot.TakenAt - failure.Time))
                .Append("</td><td class=\"kind\">").Append(Describe(failure.Kind))
                .Append("</td><td class=\"reason\">").Append(Encode(failure.Reason)).Append("</td></tr>\n");
        }

        None(html, snapshot.Failures.Count, 4, "None since the NameServer started.");
        html.Append("</tbody></table>\n");
    }

    internal static string Describe(FailureKind kind) => kind switch
    {
        FailureKind.LeaseExpired => "lease expired",
        FailureKind.PoolLost => "pool lost",
        FailureKind.Refused => "request refused",
        FailureKind.Unauthenticated => "no cluster key",
        FailureKind.Full => "registry full",
        FailureKind.RegistryUnavailable => "registry unavailable",
        _ => kind.ToString(),
    };

    private static void Shown(StringBuilder html, int shown, int total, string what)
    {
        if (total > shown)
        {
            html.Append("<p class=\"summary\">Showing ").Append(Invariant(shown)).Append(" of ").Append(Invariant(total))
                .Append(' ').Append(what).Append(".</p>\n");
        }
    }

    private static void None(StringBuilder html, int rows, int columns, string text)
    {
        if (rows == 0)
        {
            html.Append("<tr><td class=\"none\" colspan=\"").Append(Invariant(columns)).Append("\">").Append(text).Append("</td></tr>\n");
        }
    }

    private static string Buffer(int capacity) => capacity switch
    {
        0 => "none",
        -1 => "unbounded",
        _ => Invariant(capacity),
    };

    private static string Count(int n, string noun) => Invariant(n) + " " + noun + (n == 1 ? "" : "s");

    private static string Time(DateTimeOffset time) => time.UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss", CultureInfo.InvariantCulture);

    private static string Invariant(long n) => n.ToString(CultureInfo.InvariantCulture);

    private static string Encode(string text) => HtmlEncoder.Default.Encode(text);
}
