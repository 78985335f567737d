namespace CspNet.Benchmarks.Papers;

/// <summary>The four anonymous channel kinds of CSP.NET's Table 1.</summary>
public enum ChannelKind
{
    /// <summary><see cref="One2OneChannel{T}"/>.</summary>
    One2One,

    /// <summary><see cref="Any2OneChannel{T}"/>.</summary>
    Any2One,

    /// <summary><see cref="One2AnyChannel{T}"/>.</summary>
    One2Any,

    /// <summary><see cref="Any2AnyChannel{T}"/>.</summary>
    Any2Any,
}
