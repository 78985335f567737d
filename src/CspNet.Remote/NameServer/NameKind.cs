namespace CspNet.Remote.NameServer;

/// <summary>What a registered name stands for.</summary>
/// <remarks>The member names are the protocol's kind strings, so <see cref="object.ToString"/> gives the wire form.</remarks>
public enum NameKind
{
    /// <summary>A channel with one writer and one reader.</summary>
    One2One,

    /// <summary>A channel with any number of writers and one reader.</summary>
    Any2One,

    /// <summary>A channel with one writer and any number of readers.</summary>
    One2Any,

    /// <summary>A channel with any number of writers and readers.</summary>
    Any2Any,

    /// <summary>A barrier.</summary>
    Barrier,

    /// <summary>A bucket.</summary>
    Bucket,
}
