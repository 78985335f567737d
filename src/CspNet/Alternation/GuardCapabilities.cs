using System;

namespace CspNet.Alternation;

/// <summary>What the selection engine may expect of a <see cref="Guard"/>; see <see cref="Guard.Capabilities"/>.</summary>
[Flags]
public enum GuardCapabilities
{
    /// <summary>
    /// A plain guard: committed synchronously by <see cref="Guard.TryCommit"/>; while the selection
    /// waits it reports through <see cref="GuardSite.TryClaim"/> or <see cref="GuardSite.Signal"/>.
    /// </summary>
    None = 0,

    /// <summary>The guard becomes ready at <see cref="Guard.DeadlineTimestamp"/>; the engine bounds its wait by it.</summary>
    Deadline = 1,

    /// <summary>
    /// Committing may take time (a round trip to a peer): after the guard signals, the engine calls
    /// <see cref="Guard.TryReserveAsync"/> while the other guards stay enabled, then
    /// <see cref="Guard.Confirm"/> or <see cref="Guard.Release"/>.
    /// </summary>
    CommitsAsynchronously = 2,
}
