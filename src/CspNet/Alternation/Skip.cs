using CspNet.Internal;

namespace CspNet;

/// <summary>
/// A guard that is always ready. Put it last in a <see cref="Alternative.PriSelect()"/> to poll
/// the other guards without waiting: "take whatever is ready, else carry on".
/// </summary>
public sealed class Skip : Guard
{
    internal override GuardKind Kind => GuardKind.Checked;

    internal override bool TryCommit(AlternativeCore alternative, int index) => true;
}
