using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using CspNet.Remote.Diagnostics;

namespace CspNet.Remote.Internal.Diagnostics;

/// <summary>
/// The instruments of the <c>CspNet.Remote</c> meter (docs/TELEMETRY.md). Each recording checks
/// <see cref="Instrument.Enabled"/> first, so a program that does not collect pays a field read.
/// </summary>
internal static class RemoteMetrics
{
    internal const string DirectionTag = "network.io.direction";
    internal const string ErrorTypeTag = "error.type";
    internal const string NameKindTag = "cspnet.name.kind";

    private static readonly KeyValuePair<string, object?> Transmit = new(DirectionTag, "transmit");
    private static readonly KeyValuePair<string, object?> Receive = new(DirectionTag, "receive");

    internal static readonly Meter Meter = new(CspNetRemoteTelemetry.MeterName, typeof(RemoteMetrics).Assembly.GetName().Version?.ToString());

    internal static readonly Counter<long> LinkMessages = Meter.CreateCounter<long>(
        "cspnet.remote.link.messages", "{message}", "gRPC messages of Link streams sent (transmit) and received (receive) by this program, over all its links.");

    internal static readonly Counter<long> LinkBytes = Meter.CreateCounter<long>(
        "cspnet.remote.link.io", "By", "Bytes of Link messages sent (transmit) and received (receive): protobuf payload, without gRPC and HTTP/2 framing.");

    internal static readonly Histogram<double> WriteDuration = Meter.CreateHistogram<double>(
        "cspnet.remote.write.duration", "s", "Round trip of a remote write that waits for the home: from sending the value to the home's answer that a reader took it (or its buffer did).");

    internal static readonly Counter<long> Registrations = Meter.CreateCounter<long>(
        "cspnet.nameserver.registrations", "{name}", "Names registered with this NameServer, by kind.");

    internal static readonly Counter<long> LeaseExpiries = Meter.CreateCounter<long>(
        "cspnet.nameserver.lease.expiries", "{lease}", "Leases this NameServer dropped because their program stopped renewing them.");

    internal static readonly UpDownCounter<long> JobsQueued = Meter.CreateUpDownCounter<long>(
        "cspnet.pool.jobs.queued", "{job}", "Jobs this worker pool accepted that have not started (waiting for their code to arrive).");

    internal static readonly UpDownCounter<long> JobsRunning = Meter.CreateUpDownCounter<long>(
        "cspnet.pool.jobs.running", "{job}", "Jobs running on this worker pool's workers.");

    internal static readonly Counter<long> JobsFailed = Meter.CreateCounter<long>(
        "cspnet.pool.jobs.failed", "{job}", "Jobs that threw or were refused on this worker pool, by error.type (the exception type, or the refusal reason).");

    /// <summary>A frame handed to gRPC: <paramref name="bytes"/> of protobuf payload.</summary>
    internal static void CountSent(int bytes) => Count(bytes, Transmit);

    /// <summary>A frame received from gRPC.</summary>
    internal static void CountReceived(long bytes) => Count(bytes, Receive);

    /// <summary>The timestamp a timed write starts at, or 0 when no one listens (then nothing is recorded at its end).</summary>
    internal static long StartWrite() => WriteDuration.Enabled ? Stopwatch.GetTimestamp() : 0;

    internal static void EndWrite(long started)
    {
        if (started != 0)
        {
            WriteDuration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds);
        }
    }

    internal static void CountRegistration(string kind)
    {
        if (Registrations.Enabled)
        {
            Registrations.Add(1, new KeyValuePair<string, object?>(NameKindTag, kind));
        }
    }

    internal static void CountLeaseExpiries(int count)
    {
        if (LeaseExpiries.Enabled)
        {
            LeaseExpiries.Add(count);
        }
    }

    /// <summary>Adds one to an up-down counter if anyone listens; returns whether it did, so that only a counted entry is counted out (see <c>CoreMetrics.EnterLive</c>).</summary>
    internal static bool Enter(UpDownCounter<long> counter)
    {
        if (!counter.Enabled)
        {
            return false;
        }

        counter.Add(1);
        return true;
    }

    internal static void Leave(UpDownCounter<long> counter, bool entered)
    {
        if (entered)
        {
            counter.Add(-1);
        }
    }

    internal static void CountJobFailed(string errorType)
    {
        if (JobsFailed.Enabled)
        {
            JobsFailed.Add(1, new KeyValuePair<string, object?>(ErrorTypeTag, errorType));
        }
    }

    private static void Count(long bytes, KeyValuePair<string, object?> direction)
    {
        if (LinkMessages.Enabled)
        {
            LinkMessages.Add(1, direction);
        }

        if (LinkBytes.Enabled)
        {
            LinkBytes.Add(bytes, direction);
        }
    }
}
