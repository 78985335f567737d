using System;
using CspNet.Alternation;

namespace CspNet.Internal;

/// <summary>The engine's <see cref="GuardSite"/>: guard <see cref="Index"/> of <see cref="Core"/>. One per guard, made with the alternative.</summary>
internal sealed class GuardSlot(AlternativeCore core, int index) : GuardSite
{
    internal AlternativeCore Core => core;

    public override int Index => index;

    public override void Signal() => core.Signal(index);

    public override bool TryClaim() => core.TryClaim(index);

    public override void Fail(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        core.Fail(index, exception);
    }

    public override void WakeAfterClaim() => core.WakeAfterClaim();
}
