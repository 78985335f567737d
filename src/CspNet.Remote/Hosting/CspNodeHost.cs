using System;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace CspNet.Remote.Hosting;

/// <summary>
/// A <see cref="CspNode"/> run by the Generic Host (registered by <c>services.AddCspNode()</c>):
/// it joins the NameServer when the host starts and leaves when the host stops. Inject it, or the
/// <see cref="CspNode"/> itself once the host has started, to get named channels, barriers and buckets.
/// </summary>
/// <remarks>
/// Hosted services start one after another in the order they were added: a hosted service added
/// after <c>AddCspNode</c> finds <see cref="Node"/> ready in its <c>StartAsync</c> or
/// <c>ExecuteAsync</c>. Code that may run earlier awaits <see cref="GetNodeAsync"/>.
/// </remarks>
public sealed partial class CspNodeHost : IHostedService
{
    private readonly IOptions<CspNodeOptions> _options;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger _logger;
    private readonly TaskCompletionSource<CspNode> _started = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private CspNode? _node;

    /// <summary>Creates the host of a node with <paramref name="options"/>; nothing starts before <see cref="StartAsync"/>.</summary>
    /// <param name="options">The node's settings (validated when the host starts).</param>
    /// <param name="loggerFactory">Where the node logs, unless <see cref="CspNodeOptions.LoggerFactory"/> is set; may be null.</param>
    /// <param name="isCspManagerNode">Whether the node also becomes <see cref="CspManager.Node"/>, the node of <c>Factory.GetOne2OneIn&lt;T&gt;(name)</c> and the other static getters.</param>
    public CspNodeHost(IOptions<CspNodeOptions> options, ILoggerFactory? loggerFactory, bool isCspManagerNode)
    {
        ArgumentNullException.ThrowIfNull(options);
        _options = options;
        _loggerFactory = loggerFactory ?? NullLoggerFactory.Instance;
        _logger = _loggerFactory.CreateLogger<CspNodeHost>();
        IsCspManagerNode = isCspManagerNode;
    }

    /// <summary>Whether the node is also <see cref="CspManager.Node"/> while the host runs.</summary>
    public bool IsCspManagerNode { get; }

    /// <summary>The started node.</summary>
    /// <exception cref="InvalidOperationException">The host has not started it yet, or has stopped.</exception>
    public CspNode Node => Volatile.Read(ref _node) ?? throw new InvalidOperationException(
        "The CspNode starts with the host and stops with it: use it after the host has started (a hosted service added after AddCspNode, " +
        "or a request), or await CspNodeHost.GetNodeAsync() to wait for it.");

    /// <summary>The node, once the host has started it.</summary>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>The started node; faults with the reason if it could not start.</returns>
    public Task<CspNode> GetNodeAsync(CancellationToken cancellationToken = default) => _started.Task.WaitAsync(cancellationToken);

    /// <summary>Starts the node's endpoint and joins the NameServer.</summary>
    /// <param name="cancellationToken">Gives up starting.</param>
    /// <returns>A task that completes when the node is reachable and registered.</returns>
    /// <exception cref="InvalidOperationException"><see cref="IsCspManagerNode"/> is set and <see cref="CspManager"/> already has a node.</exception>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        try
        {
            // Validated() copies: the node gets the host's logging without changing the registered options.
            CspNodeOptions options = _options.Value.Validated();
            options.LoggerFactory ??= _loggerFactory;
            CspNode node = await CspNode.StartAsync(options, cancellationToken).ConfigureAwait(false);
            if (IsCspManagerNode && !CspManager.TryAttach(node))
            {
                await node.DisposeAsync().ConfigureAwait(false);
                throw new InvalidOperationException(
                    "CspManager already has a node (CspManager.Init was called, or another AddCspNode host runs in this process): " +
                    "pass isCspManagerNode: false to AddCspNode for a node that only those who inject it use, or call CspManager.Shutdown() first.");
            }

            Volatile.Write(ref _node, node);
            LogStarted(_logger, node.ProgramLabel, node.Port, options.NameServer);
            _started.TrySetResult(node);
        }
        catch (Exception e)
        {
            _started.TrySetException(e);
            throw;
        }
    }

    /// <summary>Leaves the NameServer and closes the node's links and endpoint.</summary>
    /// <param name="cancellationToken">Not used: closing is bounded by the node's own timeouts.</param>
    /// <returns>A task that completes when the node is closed.</returns>
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (Interlocked.Exchange(ref _node, null) is not { } node)
        {
            _started.TrySetCanceled(CancellationToken.None);
            return;
        }

        if (IsCspManagerNode)
        {
            CspManager.Detach(node);
        }

        await node.DisposeAsync().ConfigureAwait(false);
        LogStopped(_logger, node.ProgramLabel);
    }

    [LoggerMessage(150, LogLevel.Information, "CspNet node '{Program}' listening on port {Port}, registered at the NameServer {NameServer}")]
    private static partial void LogStarted(ILogger logger, string program, int port, Uri nameServer);

    [LoggerMessage(151, LogLevel.Information, "CspNet node '{Program}' stopped")]
    private static partial void LogStopped(ILogger logger, string program);
}
