namespace CspNet.Internal;

/// <summary>How an alternative learns a guard may be ready.</summary>
internal enum GuardKind
{
    /// <summary>The guard pushes its readiness to the alternative (channel input ends).</summary>
    Pushed,

    /// <summary>The guard is checked on every selection (skip, timer, output end).</summary>
    Checked,
}

/// <summary>What <see cref="Guard.Enable"/> did.</summary>
internal enum EnableResult
{
    /// <summary>Nothing ready: the alternative may wait (an offer may have been parked).</summary>
    Waiting,

    /// <summary>The guard committed for the alternative during enabling.</summary>
    Committed,

    /// <summary>The alternative had already been claimed through another guard's offer.</summary>
    Lost,
}
