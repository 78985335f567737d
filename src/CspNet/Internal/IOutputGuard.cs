namespace CspNet.Internal;

/// <summary>An output guard: after it is chosen, the alternative asks whether its write failed (poison).</summary>
internal interface IOutputGuard
{
    /// <summary>Throws <see cref="PoisonException"/> if the chosen offer met a poisoned channel.</summary>
    void ThrowIfFailed();
}
