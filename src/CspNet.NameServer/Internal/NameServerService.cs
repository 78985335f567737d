using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using CspNet.NameServer.Internal.StatusReporting;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.NameServer;
using Grpc.Core;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.NameServer.Internal;

/// <summary>The NameServer protocol (nameserver.proto) over an <see cref="INameRegistry"/>.</summary>
/// <remarks>
/// Requests are untrusted: every failure becomes a gRPC status and nothing a client sends can
/// end the process. Waiting Resolve calls end with UNAVAILABLE when the host stops, so a
/// shutdown never waits out their full wait.
/// </remarks>
internal sealed partial class NameServerService : Proto.NameServer.NameServerBase
{
    // One day: far above any sensible wait, far below what TimeSpan.FromMilliseconds overflows at.
    private const long MaxWaitMs = 24L * 60 * 60 * 1000;

    private readonly INameRegistry _registry;
    private readonly ILogger _logger;
    private readonly RecentFailures _failures;
    private readonly CancellationToken _stopping;

    public NameServerService(INameRegistry registry, ILogger<NameServerService> logger, RecentFailures failures, IHostApplicationLifetime? lifetime = null)
    {
        _registry = registry;
        _failures = failures;
        _logger = logger;
        _stopping = lifetime?.ApplicationStopping ?? CancellationToken.None;
    }

    public override Task<Proto.OpenLeaseReply> OpenLease(Proto.OpenLeaseRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(OpenLease), async ct =>
        {
            NameLease lease = await _registry.OpenLeaseAsync(NameProtocol.FromProto(request.Endpoint), request.Program, ct).ConfigureAwait(false);
            return new Proto.OpenLeaseReply { LeaseId = lease.Id, TtlMs = (long)lease.TimeToLive.TotalMilliseconds };
        });

    public override Task<Proto.RenewReply> Renew(Proto.RenewRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(Renew), async ct =>
        {
            TimeSpan ttl = await _registry.RenewAsync(request.LeaseId, ct).ConfigureAwait(false);
            return new Proto.RenewReply { TtlMs = (long)ttl.TotalMilliseconds };
        });

    public override Task<Proto.CloseLeaseReply> CloseLease(Proto.CloseLeaseRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(CloseLease), async ct =>
        {
            await _registry.CloseLeaseAsync(request.LeaseId, ct).ConfigureAwait(false);
            return new Proto.CloseLeaseReply();
        });

    public override Task<Proto.RegisterReply> Register(Proto.RegisterRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(Register), async ct =>
        {
            NameEntry entry = NameProtocol.FromProto(request.Entry);
            NameRegistration registration = await _registry.RegisterAsync(request.LeaseId, entry, request.ReturnExisting, ct).ConfigureAwait(false);
            if (registration.Created)
            {
                LogRegistered(_logger, registration.Entry.Name, registration.Entry.Kind, registration.Entry.Endpoint);
            }

            return new Proto.RegisterReply { Entry = NameProtocol.ToProto(registration.Entry), Created = registration.Created };
        });

    public override Task<Proto.UnregisterReply> Unregister(Proto.UnregisterRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(Unregister), async ct =>
        {
            if (!await _registry.UnregisterAsync(request.LeaseId, request.Name, ct).ConfigureAwait(false))
            {
                throw new RpcException(new Status(StatusCode.NotFound, $"The name '{request.Name}' is not registered under this lease."));
            }

            return new Proto.UnregisterReply();
        });

    public override Task<Proto.MoveNameReply> MoveName(Proto.MoveNameRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(MoveName), async ct =>
        {
            NameEntry moved = await _registry.MoveAsync(request.LeaseId, request.Name, request.ToIncarnation, ct).ConfigureAwait(false);
            LogMoved(_logger, moved.Name, moved.Endpoint);
            return new Proto.MoveNameReply { Entry = NameProtocol.ToProto(moved) };
        });

    public override Task<Proto.ResolveReply> Resolve(Proto.ResolveRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(Resolve), async ct =>
        {
            ArgumentOutOfRangeException.ThrowIfNegative(request.WaitMs, "wait_ms");
            TimeSpan wait = TimeSpan.FromMilliseconds(Math.Min(request.WaitMs, MaxWaitMs));
            NameEntry? entry = await _registry.ResolveAsync(request.Name, wait, ct).ConfigureAwait(false);
            return entry is not null
                ? new Proto.ResolveReply { Entry = NameProtocol.ToProto(entry) }
                : throw new RpcException(request.WaitMs == 0
                    ? new Status(StatusCode.NotFound, $"The name '{request.Name}' is not registered.")
                    : new Status(StatusCode.DeadlineExceeded, $"The name '{request.Name}' was not registered within the wait."));
        });

    public override Task<Proto.RegisterPoolReply> RegisterPool(Proto.RegisterPoolRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(RegisterPool), async ct =>
        {
            WorkerPoolEntry pool = await _registry.RegisterPoolAsync(request.LeaseId, NameProtocol.FromProto(request.Pool), ct).ConfigureAwait(false);
            return new Proto.RegisterPoolReply { Pool = NameProtocol.ToProto(pool) };
        });

    public override Task<Proto.UpdatePoolReply> UpdatePool(Proto.UpdatePoolRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(UpdatePool), async ct =>
        {
            await _registry.UpdatePoolAsync(request.LeaseId, request.FreeWorkers, ct).ConfigureAwait(false);
            return new Proto.UpdatePoolReply();
        });

    public override Task<Proto.ListPoolsReply> ListPools(Proto.ListPoolsRequest request, ServerCallContext context) =>
        RunAsync(context, nameof(ListPools), async ct =>
        {
            ArgumentOutOfRangeException.ThrowIfNegative(request.MinFree, "min_free");
            var reply = new Proto.ListPoolsReply();
            foreach (WorkerPoolEntry pool in await _registry.ListPoolsAsync(request.MinFree, ct).ConfigureAwait(false))
            {
                reply.Pools.Add(NameProtocol.ToProto(pool));
            }

            return reply;
        });

    /// <summary>Runs one call, turning every failure into a status the protocol defines.</summary>
    private async Task<TReply> RunAsync<TReply>(ServerCallContext context, string method, Func<CancellationToken, Task<TReply>> call)
    {
        // Linked only when the host can stop: otherwise the call's own token is enough.
        using CancellationTokenSource? linked = _stopping.CanBeCanceled
            ? CancellationTokenSource.CreateLinkedTokenSource(context.CancellationToken, _stopping)
            : null;
        try
        {
            return await call(linked?.Token ?? context.CancellationToken).ConfigureAwait(false);
        }
        catch (RpcException)
        {
            throw;
        }
        catch (ArgumentException e)
        {
            throw Reject(context, method, StatusCode.InvalidArgument, e.Message);
        }
        catch (LeaseNotFoundException e)
        {
            throw Reject(context, method, StatusCode.NotFound, e.Message);
        }
        catch (NameAlreadyRegisteredException e)
        {
            throw Reject(context, method, StatusCode.AlreadyExists, e.Message);
        }
        catch (NameMoveRefusedException e)
        {
            throw Reject(context, method, StatusCode.FailedPrecondition, e.Message);
        }
        catch (NameServerCapacityExceededException e)
        {
            LogFull(_logger, method, context.Peer, e.Message);
            _failures.Record(FailureKind.Full, $"{method} from {context.Peer}: {e.Message}");
            throw new RpcException(new Status(StatusCode.ResourceExhausted, e.Message));
        }
        catch (IOException e)
        {
            // The registry's store (etcd) is unreachable or has no quorum: a condition of the
            // deployment, not of the request. The message says what to check; clients retry.
            LogRegistryUnavailable(_logger, method, e.Message);
            _failures.Record(FailureKind.RegistryUnavailable, $"{method} from {context.Peer}: {e.Message}");
            throw new RpcException(new Status(StatusCode.Unavailable, e.Message));
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException && !context.CancellationToken.IsCancellationRequested)
        {
            // The host is stopping (or the registry is gone with it): the client should retry elsewhere or later.
            throw new RpcException(new Status(StatusCode.Unavailable, "The NameServer is shutting down."));
        }
        catch (OperationCanceledException)
        {
            throw new RpcException(new Status(StatusCode.Cancelled, "The call was cancelled or its deadline passed."));
        }
        catch (Exception e)
        {
            // A bug, not a bad request: log it fully, tell the client little.
            LogFailed(_logger, e, method, context.Peer);
            throw new RpcException(new Status(StatusCode.Internal, "The NameServer failed to handle the call; see its log."));
        }
    }

    private RpcException Reject(ServerCallContext context, string method, StatusCode code, string message)
    {
        LogRejected(_logger, method, context.Peer, code, message);
        _failures.Record(FailureKind.Refused, $"{method} from {context.Peer} answered {code}: {message}");
        return new RpcException(new Status(code, message));
    }

    [LoggerMessage(10, LogLevel.Debug, "Registered '{Name}' ({Kind}) at {Endpoint}")]
    private static partial void LogRegistered(ILogger logger, string name, NameKind kind, LinkEndpoint? endpoint);

    [LoggerMessage(15, LogLevel.Information, "Moved '{Name}' to {Endpoint}")]
    private static partial void LogMoved(ILogger logger, string name, LinkEndpoint? endpoint);

    // Debug, not Warning: a misbehaving client must not be able to flood the log.
    [LoggerMessage(11, LogLevel.Debug, "{Method} from {Peer} rejected with {Status}: {Message}")]
    private static partial void LogRejected(ILogger logger, string method, string peer, StatusCode status, string message);

    [LoggerMessage(12, LogLevel.Warning, "{Method} from {Peer} refused: {Message}")]
    private static partial void LogFull(ILogger logger, string method, string peer, string message);

    [LoggerMessage(14, LogLevel.Warning, "{Method} answered UNAVAILABLE: {Message}")]
    private static partial void LogRegistryUnavailable(ILogger logger, string method, string message);

    [LoggerMessage(13, LogLevel.Error, "{Method} from {Peer} failed")]
    private static partial void LogFailed(ILogger logger, Exception exception, string method, string peer);
}
