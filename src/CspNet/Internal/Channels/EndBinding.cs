using System.Diagnostics;
using System.Threading;

namespace CspNet.Internal;

/// <summary>
/// Which alternative used a channel end last, kept under the channel lock so that a second
/// alternative selecting over the same end at the same time (two processes on one end) is refused.
/// It remembers the alternative's <see cref="SelectionActivity"/>, not the alternative, so a
/// finished alternative is never kept alive by its ends.
/// </summary>
internal struct EndBinding
{
    private SelectionActivity? _last;

    /// <summary>Records <paramref name="selection"/> as the end's user; false if another alternative is selecting over the end right now.</summary>
    internal bool TryBindLocked(object channelLock, AlternativeCore selection)
    {
        Debug.Assert(Monitor.IsEntered(channelLock), "Bound under the channel lock.");
        SelectionActivity activity = selection.Activity;
        if (_last is { } other && other != activity && other.IsActive)
        {
            return false;
        }

        _last = activity;
        return true;
    }
}
