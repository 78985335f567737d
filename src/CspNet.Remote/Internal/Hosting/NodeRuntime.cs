using System;
using CspNet.Remote.Internal.Homes;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Logging;

namespace CspNet.Remote.Internal.Hosting;

/// <summary>What every part of one program's node shares: options, identity, hosted constructs, links.</summary>
internal sealed class NodeRuntime
{
    internal NodeRuntime(CspNodeOptions options)
    {
        Options = options;
        Logger = (options.LoggerFactory ?? NullLoggerFactory.Instance).CreateLogger("CspNet.Remote");
        string process = Environment.ProcessPath is { } path ? System.IO.Path.GetFileNameWithoutExtension(path) : "program";
        ProgramLabel = options.ProgramLabel ?? $"{process}[{Environment.ProcessId}]";
    }

    internal CspNodeOptions Options { get; }

    internal ILogger Logger { get; }

    internal string ProgramLabel { get; }

    /// <summary>Identifies this run of the program to its peers: a later run has another.</summary>
    internal string Incarnation { get; } = Guid.NewGuid().ToString("N");

    /// <summary>The constructs hosted here, by name.</summary>
    internal HomeDirectory Homes { get; } = new();
}
