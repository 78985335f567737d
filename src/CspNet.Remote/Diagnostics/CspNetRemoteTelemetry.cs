namespace CspNet.Remote.Diagnostics;

/// <summary>
/// The names under which the distributed layer publishes metrics and traces, for
/// <c>dotnet-counters</c> (<c>--counters CspNet.Remote</c>) and OpenTelemetry
/// (<c>AddMeter(CspNetRemoteTelemetry.MeterName)</c>, <c>AddSource(CspNetRemoteTelemetry.ActivitySourceName)</c>).
/// docs/TELEMETRY.md lists every instrument and activity.
/// </summary>
/// <remarks>
/// A remote write and a process shipped by <c>DistParallel</c> carry the W3C trace context of
/// their activity to the other program, so one trace follows a value across programs. Nothing is
/// measured or sent while no one listens.
/// </remarks>
public static class CspNetRemoteTelemetry
{
    /// <summary>The <see cref="System.Diagnostics.Metrics.Meter"/> of the distributed layer: <c>CspNet.Remote</c>.</summary>
    public const string MeterName = "CspNet.Remote";

    /// <summary>The <see cref="System.Diagnostics.ActivitySource"/> of the distributed layer: <c>CspNet.Remote</c>.</summary>
    public const string ActivitySourceName = "CspNet.Remote";
}
