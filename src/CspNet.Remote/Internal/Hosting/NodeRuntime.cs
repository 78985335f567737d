using System;
using CspNet.Remote.Internal.Homes;
using CspNet.Remote.Internal.Transport;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>What every part of one program's node shares: options, identity, hosted constructs, links.</summary>
internal sealed class NodeRuntime : IHomeNode
{
    internal NodeRuntime(CspNodeOptions options)
    {
        Options = options;
        Logger = (options.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CspNet.Remote");
        string process = Environment.ProcessPath is { } path ? System.IO.Path.GetFileNameWithoutExtension(path) : "program";
        ProgramLabel = options.ProgramLabel ?? $"{process}[{Environment.ProcessId}]";
    }

    public CspNodeOptions Options { get; }

    public ILogger Logger { get; }

    public string ProgramLabel { get; }

    /// <summary>Identifies this run of the program to its peers: a later run has another.</summary>
    public string Incarnation { get; } = Guid.NewGuid().ToString("N");

    /// <summary>The constructs hosted here, by name.</summary>
    public HomeDirectory Homes { get; } = new();

    /// <summary>This program's bulk lane endpoint, once its server listens; null if it offers none.</summary>
    public ILaneRegistry? Lanes { get; set; }

    /// <summary>Installs a channel a leaving home hands to this program (set by the node once it has a NameServer).</summary>
    public Func<Protocol.Handover, System.Collections.Generic.IReadOnlyList<byte[]>, System.Threading.Tasks.Task<string>>? TakeHome { get; set; }

    /// <summary>
    /// Settles a channel this program took whose old home could not confirm the move (its link
    /// failed first, or it left poisoned): keeps it if the NameServer names this program, else
    /// drops it (set by the node once it has a NameServer).
    /// </summary>
    public Func<string, System.Threading.Tasks.Task>? SettleTake { get; set; }

    /// <summary>Hands a channel hosted here to the program that asked for it (set by the node once it has a NameServer).</summary>
    public Func<Home, HomeSession, System.Threading.CancellationToken, System.Threading.Tasks.Task>? GiveHome { get; set; }
}
