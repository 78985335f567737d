namespace CspNet.SystematicTests;

/// <summary>
/// A Coyote scenario: runs when <c>CSPNET_SYSTEMATIC=1</c>, skipped otherwise. Coyote 1.7.11 does
/// not control the .NET thread pool, and a continuation it paused there can be interrupted when an
/// iteration ends, which crashes the test host now and then; so the scenarios run on demand
/// (docs/ARCHITECTURE.md, "Checking the protocol"), while the protocol model runs in every test run.
/// </summary>
[AttributeUsage(AttributeTargets.Method)]
internal sealed class SystematicFactAttribute : FactAttribute
{
    public SystematicFactAttribute()
    {
        if (!SystematicRuns.Enabled)
        {
            Skip = SystematicRuns.SkipReason;
        }
    }
}

/// <summary>A Coyote scenario with data rows: runs when <c>CSPNET_SYSTEMATIC=1</c>, skipped otherwise.</summary>
[AttributeUsage(AttributeTargets.Method)]
internal sealed class SystematicTheoryAttribute : TheoryAttribute
{
    public SystematicTheoryAttribute()
    {
        if (!SystematicRuns.Enabled)
        {
            Skip = SystematicRuns.SkipReason;
        }
    }
}

internal static class SystematicRuns
{
    internal const string SkipReason = "Coyote scenarios run on demand: CSPNET_SYSTEMATIC=1 dotnet test tests/CspNet.SystematicTests";

    internal static bool Enabled => Environment.GetEnvironmentVariable("CSPNET_SYSTEMATIC") == "1";
}
