using System.Runtime.CompilerServices;

namespace CspNet.Remote.Tests.Lane;

/// <summary>
/// Runs the whole suite with the bulk lane off when CSPNET_BULK_LANE=off, so every remote test is
/// checked both ways: <c>CSPNET_BULK_LANE=off dotnet test tests/CspNet.Remote.Tests</c>.
/// </summary>
internal static class LaneSwitch
{
    internal static bool LaneOff => string.Equals(Environment.GetEnvironmentVariable("CSPNET_BULK_LANE"), "off", StringComparison.OrdinalIgnoreCase);

    /// <summary>Why a test of the lane itself is skipped in this run, or null.</summary>
    internal static string? SkipReason =>
        LaneOff ? "The bulk lane is off in this run (CSPNET_BULK_LANE=off)."
        : OperatingSystem.IsWindows() ? "Programs on Windows offer no bulk lane."
        : null;

    [ModuleInitializer]
    internal static void Apply()
    {
        if (LaneOff)
        {
            AppContext.SetSwitch(CspNodeOptions.DisableBulkLaneSwitch, true);
        }
    }
}

/// <summary>A test of the bulk lane itself: skipped when the lane is off in this run, or on Windows, where no lane is offered.</summary>
internal sealed class LaneFactAttribute : FactAttribute
{
    public LaneFactAttribute()
    {
        Skip = LaneSwitch.SkipReason;
    }
}

/// <summary>As <see cref="LaneFactAttribute"/>, for a theory.</summary>
internal sealed class LaneTheoryAttribute : TheoryAttribute
{
    public LaneTheoryAttribute()
    {
        Skip = LaneSwitch.SkipReason;
    }
}
