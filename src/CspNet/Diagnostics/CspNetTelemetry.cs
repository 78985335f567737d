namespace CspNet.Diagnostics;

/// <summary>
/// The names under which the core library publishes its metrics, for <c>dotnet-counters</c>
/// (<c>--counters CspNet</c>) and OpenTelemetry (<c>AddMeter(CspNetTelemetry.MeterName)</c>).
/// docs/TELEMETRY.md lists every instrument, its unit, its tags and its cost.
/// </summary>
/// <remarks>
/// Nothing is measured while no one listens: each instrument is checked for a listener before
/// anything is recorded, so a program that does not collect metrics pays one field read per
/// communication.
/// </remarks>
public static class CspNetTelemetry
{
    /// <summary>The <see cref="System.Diagnostics.Metrics.Meter"/> of the core library: <c>CspNet</c>.</summary>
    public const string MeterName = "CspNet";
}
