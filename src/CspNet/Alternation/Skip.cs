using CspNet.Alternation;

namespace CspNet;

/// <summary>
/// A guard that is always ready. Put it last in a <see cref="Alternative.PriSelect()"/> to poll
/// the other guards without waiting: "take whatever is ready, else carry on".
/// </summary>
public sealed class Skip : Guard
{
    /// <inheritdoc />
    protected internal override bool TryCommit(GuardSite site) => true;
}
