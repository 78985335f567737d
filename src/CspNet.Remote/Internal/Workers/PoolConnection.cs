using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Net.Http;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.Extensions.Logging;
using Proto = CspNet.Remote.Protocol.Workers;

namespace CspNet.Remote.Internal.Workers;

/// <summary>How a job shipped to a pool ended, as <see cref="DistParallel"/> sees it.</summary>
internal enum JobEnd
{
    /// <summary>Run() returned.</summary>
    Ok,

    /// <summary>Run() threw; <see cref="JobResult.Error"/> is the <see cref="RemoteProcessException"/>.</summary>
    Failed,

    /// <summary>The pool refused the job; it never started.</summary>
    Refused,

    /// <summary>The pool was lost before the job started: it can run elsewhere.</summary>
    LostBeforeStart,

    /// <summary>The pool was lost after the job started: it may have had effects and is not rerun.</summary>
    LostAfterStart,
}

internal readonly record struct JobResult(JobEnd End, Exception? Error);

/// <summary>One DistParallel run's stream to one pool (workerpool.proto, client side).</summary>
/// <remarks>
/// A failed stream (the pool's program exited, its connection reset, or keep-alive pings went
/// unanswered for the node's PeerTimeout) ends every pending job at once with
/// <see cref="JobEnd.LostBeforeStart"/> or <see cref="JobEnd.LostAfterStart"/>, so nothing waits forever.
/// </remarks>
internal sealed partial class PoolConnection : IAsyncDisposable
{
    private readonly GrpcChannel _channel;
    private readonly AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> _call;
    private readonly IProcessShipper _shipper;
    private readonly ILogger _logger;
    private readonly SemaphoreSlim _send = new(1, 1);
    private readonly Lock _lock = new();
    private readonly Dictionary<ulong, Pending> _jobs = [];
    private readonly Dictionary<string, ShippedAssembly> _assemblies = new(StringComparer.Ordinal);
    private Task _reader = Task.CompletedTask;
    private Exception? _lost;
    private bool _cancelled;
    private ulong _nextId;
    private int _disposed;
    private string _client = string.Empty;

    private PoolConnection(WorkerPoolEntry pool, GrpcChannel channel, AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> call, IProcessShipper shipper, ILogger logger)
    {
        Pool = pool;
        _channel = channel;
        _call = call;
        _shipper = shipper;
        _logger = logger;
    }

    internal WorkerPoolEntry Pool { get; }

    internal int Granted { get; private set; }

    private string PoolLabel => $"'{Pool.Name}' at {Pool.Uri}";

    /// <summary>Opens a stream to <paramref name="pool"/> and reserves up to <paramref name="wanted"/> workers; null when the pool cannot be reached or refuses.</summary>
    internal static async Task<PoolConnection?> ReserveAsync(WorkerPoolEntry pool, int wanted, PoolChannels channels, string label, IProcessShipper shipper, ILogger logger, CancellationToken cancellationToken)
    {
        CspNodeOptions options = channels.Options;
        Uri address = DialAddress(pool, options);
        if (!Security.Certificates.MayCarrySecrets(address))
        {
            // The token, the process state and the code would travel in clear text to another machine.
            LogRefusedInClear(logger, pool.Name, address);
            return null;
        }

        GrpcChannel channel = channels.Get(address);
        // Secrets go only where they may (above): the token when the pool asks for one, and the
        // cluster key, the credential of a pool that has neither a token nor client certificates.
        var headers = new Metadata { { NodeTransport.ClusterKeyHeader, options.ClusterKey! } };
        if (options.WorkerPoolToken is { Length: > 0 } token)
        {
            headers.Add(WorkerProtocol.AuthorizationHeader, "Bearer " + token);
        }

        AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.PoolFrame> call = new Proto.WorkerPool.WorkerPoolClient(channel).Run(headers, cancellationToken: CancellationToken.None);
        var connection = new PoolConnection(pool, channel, call, shipper, logger) { _client = label };
        try
        {
            // A dead pool fails the call within PeerTimeout (keep-alive); this bound is for a live
            // pool that does not answer. Generous: a pool just started answers its first call
            // slowly on a loaded machine (cold JIT), and giving up on it sends its processes home.
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            timeout.CancelAfter(ReserveTimeout(options));

            // Nothing is written until the pool has answered the call: with its headers when it
            // admits it, or with the whole (trailers-only) UNAUTHENTICATED when it refuses it. So a
            // refusal is already in when Reserve is written, and the read below reports the pool's
            // status rather than the client's view of a write the refusal cut short (which reads as
            // an unreachable pool and would send the processes home quietly).
            _ = await call.ResponseHeadersAsync.WaitAsync(timeout.Token).ConfigureAwait(false);
            try
            {
                await call.RequestStream.WriteAsync(new Proto.ClientFrame { Reserve = new Proto.Reserve { Workers = wanted, Client = label } }, cancellationToken).ConfigureAwait(false);
            }
            catch (RpcException) when (!cancellationToken.IsCancellationRequested)
            {
                // A refused call has ended, so this write fails; the response carries the pool's
                // status and the read below reports it (it does not wait: the call is over).
            }

            if (!await call.ResponseStream.MoveNext(timeout.Token).ConfigureAwait(false) || call.ResponseStream.Current.FrameCase != Proto.PoolFrame.FrameOneofCase.Granted)
            {
                throw new RpcException(new Status(StatusCode.Internal, "The pool did not answer Reserve with Granted."));
            }

            connection.Granted = call.ResponseStream.Current.Granted.Workers;
            LogReserved(logger, connection.PoolLabel, wanted, connection.Granted);
            if (connection.Granted > 0)
            {
                connection._reader = connection.ReadLoopAsync();
                return connection;
            }
        }
        catch (RpcException e) when (e.StatusCode == StatusCode.Unauthenticated)
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw new UnauthorizedAccessException($"The worker pool {connection.PoolLabel} refused the program '{label}': {e.Status.Detail}", e);
        }
        catch (Exception e) when (e is RpcException or HttpRequestException && FailedHandshake(e) && !cancellationToken.IsCancellationRequested)
        {
            // Not the pool this program trusts (no certificate, another authority's, another host's):
            // nothing was sent to it, and it is not used.
            LogImpostor(logger, connection.PoolLabel, e.Message);
        }
        catch (Exception e) when (e is RpcException or OperationCanceledException or HttpRequestException && !cancellationToken.IsCancellationRequested)
        {
            // A pool that is gone or stuck is simply not used; its registration expires with its lease.
            LogUnreachable(logger, connection.PoolLabel, e.Message);
        }
        catch
        {
            await connection.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        await connection.DisposeAsync().ConfigureAwait(false);
        return null;
    }

    /// <summary>Sends a job to one of the granted workers; completes when the pool says how it ended, or is lost.</summary>
    internal async Task<JobResult> RunAsync(ShippedProcess job)
    {
        var pending = new Pending(job.TypeName);
        ulong id;
        lock (_lock)
        {
            if (_lost is not null)
            {
                return new JobResult(JobEnd.LostBeforeStart, _lost);
            }

            if (_cancelled)
            {
                return new JobResult(JobEnd.Refused, new OperationCanceledException("The run was cancelled before this process was sent."));
            }

            id = ++_nextId;
            _jobs.Add(id, pending);
            foreach (ShippedAssembly assembly in job.Assemblies)
            {
                _assemblies.TryAdd(assembly.Sha256, assembly);
            }
        }

        using Activity? activity = RemoteTracing.StartJob(job.TypeName, Pool.Name);
        try
        {
            Proto.Job message = WorkerProtocol.ToProto(id, job);
            message.Traceparent = RemoteTracing.Traceparent(activity);
            await SendAsync(new Proto.ClientFrame { Job = message }).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or InvalidOperationException or OperationCanceledException or System.IO.IOException)
        {
            // The stream is failing: the reading loop ends every pending job, this one included.
        }

        JobResult result = await pending.Result.Task.ConfigureAwait(false);
        if (result.Error is { } error)
        {
            activity?.SetStatus(ActivityStatusCode.Error, error.Message);
        }

        return result;
    }

    /// <summary>Gives <paramref name="workers"/> of the granted workers back to the pool unused.</summary>
    internal async Task ReleaseAsync(int workers)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(workers, Granted);
        Granted -= workers;
        try
        {
            await SendAsync(new Proto.ClientFrame { Release = new Proto.Release { Workers = workers } }).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or InvalidOperationException or OperationCanceledException or System.IO.IOException)
        {
            // The stream is failing: the pool takes every worker of it back when it ends.
        }
    }

    /// <summary>
    /// Asks the pool to cancel every job of this stream (workerpool.proto, Cancellation); jobs not
    /// sent yet are not sent. Each pending job still ends with its Done, or when the stream is lost.
    /// </summary>
    internal async Task CancelAsync()
    {
        lock (_lock)
        {
            if (_cancelled)
            {
                return;
            }

            _cancelled = true;
        }

        try
        {
            await SendAsync(new Proto.ClientFrame { Cancel = new Proto.Cancel() }).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or InvalidOperationException or OperationCanceledException or System.IO.IOException or ObjectDisposedException)
        {
            // The stream is failing or over: the reading loop ends every pending job.
        }
    }

    /// <summary>Cancels the stream without waiting for the pool (the caller stopped waiting); jobs running there run to their end.</summary>
    internal void Abort() => _call.Dispose();

    /// <summary>Ends this client's half of the stream and waits for the pool to end its own.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            await _send.WaitAsync().ConfigureAwait(false);
            try
            {
                await _call.RequestStream.CompleteAsync().ConfigureAwait(false);
            }
            finally
            {
                _send.Release();
            }

            await _reader.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
        catch (Exception e) when (e is RpcException or InvalidOperationException or OperationCanceledException or System.IO.IOException)
        {
            // Already failed or ended: nothing more to say to the pool.
        }
        finally
        {
            // The channel is the node's (PoolChannels), kept for the next run.
            _call.Dispose();
            _send.Dispose();
        }
    }

    private static TimeSpan ReserveTimeout(CspNodeOptions options)
    {
        TimeSpan bound = options.NameServerTimeout + options.PeerTimeout;
        return bound < TimeSpan.FromSeconds(30) ? TimeSpan.FromSeconds(30) : bound;
    }

    /// <summary>
    /// Where to dial <paramref name="pool"/>. A program that trusts a certificate speaks TLS to every
    /// pool, whatever the registration says: the <c>tls</c> flag comes from whoever registered the
    /// pool, so the pool is pinned by the certificate it must present, not by what it advertises.
    /// </summary>
    internal static Uri DialAddress(WorkerPoolEntry pool, CspNodeOptions options) =>
        pool.Tls || options.WorkerPoolTrustedCertificate is not null
            ? new UriBuilder(Uri.UriSchemeHttps, pool.Endpoint.Host, pool.Endpoint.Port).Uri
            : pool.Uri;

    internal static GrpcChannel CreateChannel(Uri address, CspNodeOptions options)
    {
        // A pool whose machine vanishes is noticed within about PeerTimeout; one that exits, at once.
#pragma warning disable CA2000 // The channel owns and disposes the handler (DisposeHttpClient).
        SocketsHttpHandler handler = NodeTransport.NewHandler(options);
#pragma warning restore CA2000
        if (address.Scheme == Uri.UriSchemeHttps)
        {
            handler.SslOptions = new SslClientAuthenticationOptions
            {
                ClientCertificates = options.WorkerPoolClientCertificate is { } mine ? new X509CertificateCollection { mine } : null,
                RemoteCertificateValidationCallback = options.WorkerPoolTrustedCertificate is { } trusted ? Security.Certificates.ServerValidator(trusted) : null,
            };
        }

        return GrpcChannel.ForAddress(address, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            MaxReceiveMessageSize = 16 << 20,
            MaxSendMessageSize = WorkerProtocol.ChunkSize + (64 << 10),
        });
    }

    private static bool FailedHandshake(Exception e)
    {
        for (Exception? inner = e; inner is not null; inner = inner.InnerException)
        {
            if (inner is System.Security.Authentication.AuthenticationException)
            {
                return true;
            }
        }

        return false;
    }

    private async Task SendAsync(Proto.ClientFrame frame)
    {
        await _send.WaitAsync().ConfigureAwait(false);
        try
        {
            await _call.RequestStream.WriteAsync(frame).ConfigureAwait(false);
        }
        finally
        {
            _send.Release();
        }
    }

    private async Task ReadLoopAsync()
    {
        Exception? failure = null;
        try
        {
            while (await _call.ResponseStream.MoveNext(CancellationToken.None).ConfigureAwait(false))
            {
                Proto.PoolFrame frame = _call.ResponseStream.Current;
                switch (frame.FrameCase)
                {
                    case Proto.PoolFrame.FrameOneofCase.NeedAssemblies:
                        // Off the reading loop: an image may be megabytes, and Started/Done frames must keep flowing.
                        _ = SendImagesAsync(frame.NeedAssemblies);
                        break;
                    case Proto.PoolFrame.FrameOneofCase.Started:
                        lock (_lock)
                        {
                            if (_jobs.TryGetValue(frame.Started.JobId, out Pending? started))
                            {
                                started.Started = true;
                            }
                        }

                        break;
                    case Proto.PoolFrame.FrameOneofCase.Done:
                        Complete(frame.Done);
                        break;
                    default:
                        break; // Frames of a later protocol version: ignored, as protobuf ignores unknown fields.
                }
            }
        }
#pragma warning disable CA1031 // Whatever ended the stream, every pending job must learn it.
        catch (Exception e)
#pragma warning restore CA1031
        {
            failure = e;
        }

        List<Pending> orphans;
        lock (_lock)
        {
            _lost = failure ?? new RpcException(new Status(StatusCode.Unavailable, "The pool ended the stream."));
            orphans = [.. _jobs.Values];
            _jobs.Clear();
        }

        if (orphans.Count > 0)
        {
            LogLost(_logger, PoolLabel, orphans.Count, _lost.Message);
        }

        foreach (Pending pending in orphans)
        {
            pending.Result.TrySetResult(pending.Started
                ? new JobResult(JobEnd.LostAfterStart, new WorkerLostException(pending.TypeName, PoolLabel, _lost))
                : new JobResult(JobEnd.LostBeforeStart, _lost));
        }
    }

    private void Complete(Proto.Done done)
    {
        Pending? pending;
        lock (_lock)
        {
            if (!_jobs.Remove(done.JobId, out pending))
            {
                return;
            }
        }

        pending.Result.TrySetResult(done.OutcomeCase switch
        {
            Proto.Done.OutcomeOneofCase.Ok => new JobResult(JobEnd.Ok, null),
            Proto.Done.OutcomeOneofCase.Failure => new JobResult(JobEnd.Failed, WorkerProtocol.ToException(done.Failure)),
            Proto.Done.OutcomeOneofCase.Refused => new JobResult(JobEnd.Refused, new ProcessRefusedException(
                done.Refused.Reason.ToString(),
                $"The worker pool {PoolLabel} refused to run a {pending.TypeName} of the program '{_client}': {WorkerProtocol.Describe(done.Refused.Reason)}. {done.Refused.Message} "
                + "The process ran nowhere: ship it again from a build the pool allows, or run it in this program.")),
            _ => new JobResult(JobEnd.Failed, new RemoteProcessException($"The worker pool {PoolLabel} ended a {pending.TypeName} without saying how.")),
        });
    }

    private async Task SendImagesAsync(Proto.NeedAssemblies need)
    {
        try
        {
            foreach (string hash in need.Sha256)
            {
                ShippedAssembly? assembly;
                lock (_lock)
                {
                    _assemblies.TryGetValue(hash, out assembly);
                }

                // An image this client never announced: send nothing; the pool refuses the job when the stream ends.
                if (assembly is null)
                {
                    continue;
                }

                byte[] image = _shipper.ReadImage(assembly);
                await _send.WaitAsync().ConfigureAwait(false);
                try
                {
                    int offset = 0;
                    do
                    {
                        int length = Math.Min(WorkerProtocol.ChunkSize, image.Length - offset);
                        var chunk = new Proto.AssemblyChunk { Sha256 = hash, Data = ByteString.CopyFrom(image, offset, length), Last = offset + length == image.Length };
                        await _call.RequestStream.WriteAsync(new Proto.ClientFrame { Assembly = chunk }).ConfigureAwait(false);
                        offset += length;
                    }
                    while (offset < image.Length);
                }
                finally
                {
                    _send.Release();
                }

                LogImageSent(_logger, assembly.Name, image.Length, PoolLabel);
            }
        }
#pragma warning disable CA1031 // A failed send shows as the stream's failure, which the reading loop reports.
        catch (Exception e)
#pragma warning restore CA1031
        {
            LogImageFailed(_logger, PoolLabel, e.Message);
        }
    }

    private sealed class Pending(string typeName)
    {
        public string TypeName { get; } = typeName;

        public bool Started { get; set; }

        public TaskCompletionSource<JobResult> Result { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    [LoggerMessage(130, LogLevel.Debug, "Worker pool {Pool}: asked for {Asked} workers, granted {Granted}")]
    private static partial void LogReserved(ILogger logger, string pool, int asked, int granted);

    [LoggerMessage(131, LogLevel.Warning, "Worker pool {Pool} is unreachable and is not used: {Message}")]
    private static partial void LogUnreachable(ILogger logger, string pool, string message);

    [LoggerMessage(132, LogLevel.Warning, "Worker pool {Pool} was lost with {Jobs} jobs pending: {Message}")]
    private static partial void LogLost(ILogger logger, string pool, int jobs, string message);

    [LoggerMessage(133, LogLevel.Debug, "Sent assembly {Assembly} ({Bytes} bytes) to the worker pool {Pool}")]
    private static partial void LogImageSent(ILogger logger, string assembly, int bytes, string pool);

    [LoggerMessage(135, LogLevel.Warning, "Worker pool '{Pool}' at {Address} is not used: it would receive this program's token and processes in clear text; give the pool a certificate and this program WorkerPoolTrustedCertificate")]
    private static partial void LogRefusedInClear(ILogger logger, string pool, Uri address);

    [LoggerMessage(136, LogLevel.Warning, "Worker pool {Pool} is not used: it did not prove it is a pool this program trusts (WorkerPoolTrustedCertificate): {Message}")]
    private static partial void LogImpostor(ILogger logger, string pool, string message);

    [LoggerMessage(134, LogLevel.Warning, "Sending assemblies to the worker pool {Pool} failed: {Message}")]
    private static partial void LogImageFailed(ILogger logger, string pool, string message);
}
