using System;

namespace CspNet.Remote;

/// <summary>A name this program registered was taken by another program (<see cref="CspNode.NameLost"/>).</summary>
public sealed class NameLostEventArgs : EventArgs
{
    /// <summary>Creates the event's data.</summary>
    /// <param name="name">The name that was lost.</param>
    /// <param name="detail">The NameServer's account of who holds it now.</param>
    public NameLostEventArgs(string name, string detail)
    {
        Name = name;
        Detail = detail;
    }

    /// <summary>The name that was lost.</summary>
    public string Name { get; }

    /// <summary>The NameServer's account of who holds it now.</summary>
    public string Detail { get; }
}
