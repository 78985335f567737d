namespace CspNet;

/// <summary>
/// Settings of the core library for programs on the Generic Host, bound from the
/// <see cref="SectionName"/> configuration section by <c>services.AddCspNet()</c>.
/// </summary>
/// <remarks>Programs in the paper's style need none of this: <see cref="CSPThreadPool.Default"/> works as it is.</remarks>
public sealed class CspNetOptions
{
    /// <summary>The configuration section the options are bound from: <c>CspNet</c>.</summary>
    public const string SectionName = "CspNet";

    /// <summary>
    /// Maximum stack size, in bytes, of the threads of the injected <see cref="CSPThreadPool"/>
    /// (see <see cref="CSPThreadPool.MaxStackSize"/>); 0 (the default) means the runtime default.
    /// </summary>
    public int MaxStackSize { get; set; }
}
