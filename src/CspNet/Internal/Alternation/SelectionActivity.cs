using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// Whether an alternative is selecting now. Channel ends remember the last one that used them
/// through this small object rather than the alternative itself, so that an end never keeps a
/// finished alternative (its guards, timers, captured state) alive.
/// </summary>
internal sealed class SelectionActivity
{
    private volatile bool _active;

    internal bool IsActive => _active;

    internal void Set(bool active) => _active = active;
}
