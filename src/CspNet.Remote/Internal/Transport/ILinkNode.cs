using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Transport;

/// <summary>
/// What both ends of a link need from the program they run in: its options, logger and identity.
/// The node runtime implements it, so links depend on this and not on the hosting layer above them.
/// </summary>
internal interface ILinkNode
{
    /// <summary>The program's node options.</summary>
    CspNodeOptions Options { get; }

    /// <summary>Where link events are logged.</summary>
    ILogger Logger { get; }

    /// <summary>The program's name in messages and logs.</summary>
    string ProgramLabel { get; }

    /// <summary>Identifies this run of the program to its peers: a later run has another.</summary>
    string Incarnation { get; }

    /// <summary>
    /// Installs a channel whose leaving home offers it to this program (link.proto, Handover), with
    /// the buffered values that came before the offer, in order, and returns the incarnation the
    /// NameServer knows this program by; null when this program takes none.
    /// </summary>
    System.Func<CspNet.Remote.Protocol.Handover, System.Collections.Generic.IReadOnlyList<byte[]>, System.Threading.Tasks.Task<string>>? TakeHome => null;

    /// <summary>
    /// Settles a channel this program took whose old home could not confirm that it moved the name:
    /// kept if the NameServer names this program, else dropped; null when this program takes none.
    /// </summary>
    System.Func<string, System.Threading.Tasks.Task>? SettleTake => null;
}
