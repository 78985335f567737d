using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using CspNet.Diagnostics;

namespace CspNet.Internal;

/// <summary>
/// The instruments of the <c>CspNet</c> meter (docs/TELEMETRY.md). Every recording method checks
/// <see cref="Instrument.Enabled"/> first and records out of line: with no listener a
/// communication pays one read of a field nobody writes, never a shared counter.
/// </summary>
internal static class CoreMetrics
{
    internal const string ChannelKindTag = "cspnet.channel.kind";
    internal const string ProcessKindTag = "cspnet.process.kind";
    internal const string ThreadKind = "thread";
    internal const string AsyncKind = "async";

    internal static readonly Meter Meter = new(CspNetTelemetry.MeterName, typeof(CoreMetrics).Assembly.GetName().Version?.ToString());

    internal static readonly Counter<long> Communications = Meter.CreateCounter<long>(
        "cspnet.channel.communications", "{communication}", "Values taken by readers (plain reads and selected input guards), by channel kind.");

    internal static readonly Counter<long> Selections = Meter.CreateCounter<long>(
        "cspnet.alternative.selections", "{selection}", "Alternative selections that chose a guard.");

    internal static readonly UpDownCounter<long> LiveProcesses = Meter.CreateUpDownCounter<long>(
        "cspnet.process.live", "{process}", "Processes started by a Parallel that have not ended, by process kind.");

    internal static readonly UpDownCounter<long> ParkedProcesses = Meter.CreateUpDownCounter<long>(
        "cspnet.process.parked", "{process}", "Processes parked in a channel operation or a selection, by process kind.");

    internal static readonly Counter<long> PoisonedChannels = Meter.CreateCounter<long>(
        "cspnet.channel.poisoned", "{channel}", "Channels poisoned, by channel kind.");

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CountCommunication(ChannelShape shape)
    {
        // The kind's name is looked up only while someone listens.
        if (Communications.Enabled)
        {
            AddCommunication(shape.ClassName());
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void CountSelection()
    {
        if (Selections.Enabled)
        {
            AddSelection();
        }
    }

    internal static void CountPoisoned(string channelKind)
    {
        if (PoisonedChannels.Enabled)
        {
            PoisonedChannels.Add(1, new KeyValuePair<string, object?>(ChannelKindTag, channelKind));
        }
    }

    /// <summary>
    /// Counts a process as started if anyone listens. Returns whether it did: only then may the
    /// end be counted, so a listener that appears meanwhile never sees an end without its start.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool EnterLive(string processKind) => LiveProcesses.Enabled && Add(LiveProcesses, 1, processKind);

    internal static void LeaveLive(string processKind) => Add(LiveProcesses, -1, processKind);

    /// <summary>Counts a process as parked if anyone listens; see <see cref="EnterLive"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool EnterParked(string processKind) => ParkedProcesses.Enabled && Add(ParkedProcesses, 1, processKind);

    internal static void LeaveParked(string processKind) => Add(ParkedProcesses, -1, processKind);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void AddCommunication(string channelKind) =>
        Communications.Add(1, new KeyValuePair<string, object?>(ChannelKindTag, channelKind));

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void AddSelection() => Selections.Add(1);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static bool Add(UpDownCounter<long> counter, long delta, string processKind)
    {
        counter.Add(delta, new KeyValuePair<string, object?>(ProcessKindTag, processKind));
        return true;
    }
}
