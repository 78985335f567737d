using System;
using System.Buffers;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading;
using System.Threading.Channels;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Diagnostics;
using CspNet.Remote.Internal.Naming;
using Grpc.Core;
using Microsoft.Extensions.Logging;
using Proto = CspNet.Remote.Protocol.Workers;

namespace CspNet.Remote.Internal.Workers;

/// <summary>The WorkerPool protocol (workerpool.proto): one <see cref="Session"/> per Run stream.</summary>
/// <remarks>
/// Requests are untrusted: a malformed frame ends its stream with INVALID_ARGUMENT (jobs already
/// running run on), and nothing a client sends ends the pool.
/// </remarks>
internal sealed partial class WorkerPoolGrpcService(PoolRuntime pool) : Proto.WorkerPool.WorkerPoolBase
{
    public override async Task Run(IAsyncStreamReader<Proto.ClientFrame> requestStream, IServerStreamWriter<Proto.PoolFrame> responseStream, ServerCallContext context)
    {
        // Headers first: a client waits for them (or, from a caller this pool refuses in
        // PoolTokenInterceptor, for the trailers-only UNAUTHENTICATED) before it writes Reserve,
        // so no write of its can race the refusal.
        await context.WriteResponseHeadersAsync([]).ConfigureAwait(false);
        var session = new Session(pool, responseStream, context);
        try
        {
            await session.RunAsync(requestStream).ConfigureAwait(false);
        }
        catch (RpcException e)
        {
            LogRejected(pool.Logger, context.Peer, e.StatusCode, e.Status.Detail);
            throw;
        }
        catch (Exception e) when (e is IOException or OperationCanceledException)
        {
            // The client went away; its running jobs finish on their own threads.
            LogClientLost(pool.Logger, context.Peer, e.Message);
        }
        finally
        {
            await session.EndAsync().ConfigureAwait(false);
        }
    }

    /// <summary>One client's stream: its reserved workers, its jobs and the images it is sending.</summary>
    private sealed class Session(PoolRuntime pool, IServerStreamWriter<Proto.PoolFrame> responses, ServerCallContext context)
    {
        private readonly Channel<Proto.PoolFrame> _outbound = Channel.CreateUnbounded<Proto.PoolFrame>(new UnboundedChannelOptions { SingleReader = true });
        private readonly Dictionary<ulong, Waiting> _waiting = [];
        private readonly HashSet<ulong> _ids = [];

        // Images asked for on this stream and not yet received: a second job needing one waits for the same image.
        private readonly HashSet<string> _requested = new(StringComparer.Ordinal);
        private readonly List<Task> _running = [];

        // The cancellations of the jobs started and not ended; worker threads' continuations remove theirs.
        private readonly Lock _lock = new();
        private readonly Dictionary<ulong, ProcessCancellation> _cancellations = [];
        private bool _cancelled;
        private Task _writer = Task.CompletedTask;
        private int _unused;
        private bool _reserved;

        // When the granted workers still unused must have jobs (ReservationTimeout after Granted).
        private long _reservationDue;

        // Set when the stream has ended: a job still being loaded then never starts. Its client,
        // having seen no Started, may already be running it elsewhere.
        private volatile bool _ended;
        private string? _imageHash;
        private ArrayBufferWriter<byte>? _image;

        public async Task RunAsync(IAsyncStreamReader<Proto.ClientFrame> requests)
        {
            _writer = WriteLoopAsync();
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(context.CancellationToken);
            string? expired = null;
            while (true)
            {
                // The read waits at most until the earliest deadline of what this stream holds idle.
                (TimeSpan wait, string? why) = NextDeadline();
                if (why is not null && wait <= TimeSpan.Zero)
                {
                    expired = why;
                    break;
                }

                deadline.CancelAfter(why is null ? Timeout.InfiniteTimeSpan : wait);
                try
                {
                    if (!await requests.MoveNext(deadline.Token).ConfigureAwait(false))
                    {
                        break;
                    }
                }
                catch (OperationCanceledException) when (deadline.IsCancellationRequested && !context.CancellationToken.IsCancellationRequested)
                {
                    expired = NextDeadline().Why ?? "a deadline passed";
                    break;
                }

                Proto.ClientFrame frame = requests.Current;
                switch (frame.FrameCase)
                {
                    case Proto.ClientFrame.FrameOneofCase.Reserve:
                        await ReserveAsync(frame.Reserve).ConfigureAwait(false);
                        break;
                    case Proto.ClientFrame.FrameOneofCase.Job:
                        OnJob(frame.Job);
                        break;
                    case Proto.ClientFrame.FrameOneofCase.Assembly:
                        OnAssembly(frame.Assembly);
                        break;
                    case Proto.ClientFrame.FrameOneofCase.Release:
                        OnRelease(frame.Release.Workers);
                        break;
                    case Proto.ClientFrame.FrameOneofCase.Cancel:
                        OnCancel();
                        break;
                    default:
                        throw Invalid("An empty or unknown frame.");
                }
            }

            // The client has sent everything (or let a deadline pass): images that never came will not come.
            foreach ((ulong id, Waiting waiting) in _waiting)
            {
                Drop(waiting);
                Refuse(id, Proto.RefusalReason.AssemblyMissing, expired is null
                    ? $"The client ended its stream without sending {waiting.Missing.Count} assembly images the job needs."
                    : $"The pool stopped waiting for {waiting.Missing.Count} assembly images the job needs: {expired}.");
            }

            _waiting.Clear();
            ReturnUnused();

            // The stream stays open until every job's Done has been written.
            await Task.WhenAll(_running).ConfigureAwait(false);
            _outbound.Writer.TryComplete();
            await _writer.ConfigureAwait(false);
            if (expired is not null)
            {
                LogExpired(pool.Logger, context.Peer, expired);
                throw new RpcException(new Status(StatusCode.ResourceExhausted, $"This stream held the pool's workers idle too long ({expired}); its unused workers went back to the pool. Reserve again and send the jobs and their images at once."));
            }
        }

        /// <summary>How long until the earliest deadline of what the stream holds idle, and which; no reason when it holds nothing idle.</summary>
        private (TimeSpan Wait, string? Why) NextDeadline()
        {
            long due = long.MaxValue;
            string? why = null;
            if (_unused > 0)
            {
                due = _reservationDue;
                why = $"{_unused} granted workers had no job within the pool's ReservationTimeout of {pool.Options.ReservationTimeout}";
            }

            foreach (Waiting waiting in _waiting.Values)
            {
                if (waiting.Due < due)
                {
                    due = waiting.Due;
                    why = $"a job's assembly images did not arrive within the pool's ImageTimeout of {pool.Options.ImageTimeout}";
                }
            }

            if (why is null)
            {
                return (Timeout.InfiniteTimeSpan, null);
            }

            long now = Stopwatch.GetTimestamp();
            return (due <= now ? TimeSpan.Zero : Stopwatch.GetElapsedTime(now, due), why);
        }

        /// <summary>Returns what the stream still holds; jobs running go on and return their workers when they end.</summary>
        public async Task EndAsync()
        {
            _ended = true;
            foreach (Waiting waiting in _waiting.Values)
            {
                Drop(waiting);
                pool.Return(1);
            }

            _waiting.Clear();
            ReturnUnused();
            _outbound.Writer.TryComplete();
            await _writer.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        private async Task ReserveAsync(Proto.Reserve reserve)
        {
            if (_reserved)
            {
                throw Invalid("Reserve may be sent once, first.");
            }

            if (reserve.Workers is < 1 or > WorkerProtocol.MaxReserve)
            {
                throw Invalid($"Reserve asks for 1..{WorkerProtocol.MaxReserve} workers (got {reserve.Workers}).");
            }

            _reserved = true;

            // Calls that arrive while the pool is still joining the NameServer wait for it.
            await pool.Ready.WaitAsync(context.CancellationToken).ConfigureAwait(false);
            _unused = pool.TryReserve(reserve.Workers);
            _reservationDue = Stopwatch.GetTimestamp() + (long)(pool.Options.ReservationTimeout.TotalSeconds * Stopwatch.Frequency);
            LogReserved(pool.Logger, NameValidation.Shorten(reserve.Client), context.Peer, reserve.Workers, _unused);
            Send(new Proto.PoolFrame { Granted = new Proto.Granted { Workers = _unused } });
        }

        private void OnJob(Proto.Job message)
        {
            if (!_reserved)
            {
                throw Invalid("A Job before Reserve.");
            }

            if (_unused == 0)
            {
                throw Invalid("More jobs than granted workers.");
            }

            if (!_ids.Add(message.JobId))
            {
                throw Invalid($"The job id {message.JobId} is used twice.");
            }

            ShippedProcess job;
            try
            {
                job = WorkerProtocol.FromProto(message);
            }
            catch (ArgumentException e)
            {
                throw Invalid(e.Message);
            }

            _unused--;
            if (IsCancelled)
            {
                Refuse(message.JobId, Proto.RefusalReason.Cancelled, "The client cancelled this stream's jobs before this one arrived.");
                return;
            }

            IReadOnlyList<ShippedAssembly> missing = pool.Code.Pin(job.Assemblies);
            if (missing.Count == 0)
            {
                Start(message.JobId, job, message.Traceparent);
                return;
            }

            var need = new Proto.NeedAssemblies { JobId = message.JobId };
            long due = Stopwatch.GetTimestamp() + (long)(pool.Options.ImageTimeout.TotalSeconds * Stopwatch.Frequency);
            var waiting = new Waiting(job, new Dictionary<string, ShippedAssembly>(StringComparer.Ordinal), message.Traceparent, RemoteMetrics.Enter(RemoteMetrics.JobsQueued), due);
            foreach (ShippedAssembly assembly in missing)
            {
                waiting.Missing[assembly.Sha256] = assembly;
                if (_requested.Add(assembly.Sha256))
                {
                    need.Sha256.Add(assembly.Sha256);
                }
            }

            _waiting.Add(message.JobId, waiting);
            if (need.Sha256.Count > 0)
            {
                Send(new Proto.PoolFrame { NeedAssemblies = need });
            }
        }

        private void OnAssembly(Proto.AssemblyChunk chunk)
        {
            if (_imageHash is null)
            {
                if (!IsAwaited(chunk.Sha256))
                {
                    throw Invalid($"An image nobody asked for ({NameValidation.Shorten(chunk.Sha256)}).");
                }

                _imageHash = chunk.Sha256;
                _image = new ArrayBufferWriter<byte>();
            }
            else if (!string.Equals(_imageHash, chunk.Sha256, StringComparison.Ordinal))
            {
                throw Invalid("Parts of two images interleave: send one image's parts, ending with last, before the next.");
            }

            if ((long)_image!.WrittenCount + chunk.Data.Length > pool.Options.MaxAssemblySize)
            {
                throw new RpcException(new Status(StatusCode.ResourceExhausted, $"An assembly image is larger than this pool accepts ({pool.Options.MaxAssemblySize} bytes)."));
            }

            _image.Write(chunk.Data.Span);
            if (!chunk.Last)
            {
                return;
            }

            string hash = _imageHash;
            ReadOnlyMemory<byte> image = _image.WrittenMemory;
            _imageHash = null;
            _requested.Remove(hash);
            ShippedAssembly? assembly = null;
            foreach (Waiting waiting in _waiting.Values)
            {
                if (waiting.Missing.TryGetValue(hash, out assembly))
                {
                    break;
                }
            }

            string? refusal = null;
            try
            {
                pool.Code.Add(assembly!, image);
            }
            catch (ShippingRefusedException e) when (e.Reason == ShippingRefusal.StoreFull)
            {
                throw new RpcException(new Status(StatusCode.ResourceExhausted, e.Message));
            }
            catch (ShippingRefusedException e)
            {
                refusal = e.Message;
                LogImageRefused(pool.Logger, context.Peer, assembly!.Name, e.Message);
            }
            finally
            {
                _image = null;
            }

            foreach ((ulong id, Waiting waiting) in new List<KeyValuePair<ulong, Waiting>>(_waiting))
            {
                if (!waiting.Missing.Remove(hash))
                {
                    continue;
                }

                if (refusal is not null)
                {
                    _waiting.Remove(id);
                    Drop(waiting);
                    Refuse(id, Proto.RefusalReason.HashMismatch, refusal);
                }
                else if (waiting.Missing.Count == 0)
                {
                    _waiting.Remove(id);
                    RemoteMetrics.Leave(RemoteMetrics.JobsQueued, waiting.Queued);
                    Start(id, waiting.Job, waiting.Traceparent);
                }
            }
        }

        private bool IsAwaited(string hash)
        {
            foreach (Waiting waiting in _waiting.Values)
            {
                if (waiting.Missing.ContainsKey(hash))
                {
                    return true;
                }
            }

            return false;
        }

        private void OnRelease(int workers)
        {
            if (workers < 0 || workers > _unused)
            {
                throw Invalid($"Release gives back {workers} workers; this stream holds {_unused} unused.");
            }

            _unused -= workers;
            pool.Return(workers);
        }

        private bool IsCancelled
        {
            get
            {
                lock (_lock)
                {
                    return _cancelled;
                }
            }
        }

        /// <summary>Cancels every job of the stream: those waiting for images never start, those running are cancelled and their ends poisoned.</summary>
        private void OnCancel()
        {
            List<ProcessCancellation> running;
            lock (_lock)
            {
                if (_cancelled)
                {
                    return;
                }

                _cancelled = true;
                running = [.. _cancellations.Values];
            }

            LogCancelled(pool.Logger, context.Peer, running.Count, _waiting.Count);
            foreach ((ulong id, Waiting waiting) in _waiting)
            {
                Drop(waiting);
                Refuse(id, Proto.RefusalReason.Cancelled, "The client cancelled this stream's jobs while the pool waited for their assembly images.");
            }

            _waiting.Clear();
            foreach (ProcessCancellation cancellation in running)
            {
                cancellation.Cancel();
            }
        }

        /// <summary>A waiting job that will not start: counted out of the queue, its images unpinned.</summary>
        private void Drop(Waiting waiting)
        {
            RemoteMetrics.Leave(RemoteMetrics.JobsQueued, waiting.Queued);
            pool.Code.Unpin(waiting.Job.Assemblies);
        }

        private void ReturnUnused()
        {
            pool.Return(_unused);
            _unused = 0;
        }

        /// <summary>Runs the job on a thread of its own; its worker goes back to the pool when it ends.</summary>
        private void Start(ulong id, ShippedProcess job, string traceparent)
        {
#pragma warning disable RS0030 // Completed: a session starts jobs only after awaiting pool.Ready.
            CspNode node = pool.Ready.Result;
#pragma warning restore RS0030
#pragma warning disable CA2000 // Disposed by the job's continuation below, once the thread has ended.
            var cancellation = new ProcessCancellation();
#pragma warning restore CA2000
            bool cancelNow;
            lock (_lock)
            {
                _cancellations.Add(id, cancellation);
                cancelNow = _cancelled;
            }

            if (cancelNow)
            {
                cancellation.Cancel();
            }

            Task<Exception?> run = ProcessThread.Start(
                () =>
                {
                    ProcessLease lease;
                    try
                    {
                        lease = pool.Code.Instantiate(job);
                    }
                    catch (ShippingRefusedException e)
                    {
                        throw new RefusedJob(e);
                    }
                    finally
                    {
                        // Loaded (or refused): the store may drop its images again.
                        pool.Code.Unpin(job.Assemblies);
                    }

                    using (lease)
                    {
                        if (_ended)
                        {
                            LogJobDropped(pool.Logger, id, job.TypeName, context.Peer);
                            return;
                        }

                        if (cancellation.IsCancelled)
                        {
                            throw new RefusedJob(new ShippingRefusedException(ShippingRefusal.Cancelled, "The client cancelled the job while it was being loaded."));
                        }

                        Send(new Proto.PoolFrame { Started = new Proto.Started { JobId = id } });
                        LogJobStarted(pool.Logger, id, job.TypeName, context.Peer);

                        // Current on this thread: the process's own remote writes join the client's trace.
                        using Activity? activity = RemoteTracing.StartProcess(traceparent, job.TypeName);
                        bool running = RemoteMetrics.Enter(RemoteMetrics.JobsRunning);
                        try
                        {
                            lease.Process.Run();
                        }
                        catch (Exception e)
                        {
                            activity?.SetStatus(ActivityStatusCode.Error, e.Message);
                            throw;
                        }
                        finally
                        {
                            RemoteMetrics.Leave(RemoteMetrics.JobsRunning, running);
                        }
                    }
                },
                node,
                cancellation,
                "cspnet-worker " + job.TypeName);
            _running.Add(run.ContinueWith(
                finished =>
                {
                    lock (_lock)
                    {
                        _cancellations.Remove(id);
                    }

                    cancellation.Dispose();
                    pool.Return(1);
#pragma warning disable RS0030 // In the task's continuation: it has completed.
                    Exception? failure = finished.Result;
#pragma warning restore RS0030
                    switch (failure)
                    {
                        case null:
                            Send(new Proto.PoolFrame { Done = new Proto.Done { JobId = id, Ok = new Proto.Ok() } });
                            break;
                        case RefusedJob refused:
                            RemoteMetrics.CountJobFailed(refused.Inner.Reason.ToString());
                            LogJobRefused(pool.Logger, id, job.TypeName, context.Peer, refused.Inner.Reason, refused.Inner.Message);
                            Send(new Proto.PoolFrame { Done = new Proto.Done { JobId = id, Refused = new Proto.Refused { Reason = WorkerProtocol.ToProto(refused.Inner.Reason), Message = refused.Inner.Message } } });
                            break;
                        default:
                            RemoteMetrics.CountJobFailed(failure.GetType().FullName ?? failure.GetType().Name);
                            LogJobFailed(pool.Logger, id, job.TypeName, failure.GetType().FullName, failure.Message);
                            Send(new Proto.PoolFrame { Done = new Proto.Done { JobId = id, Failure = WorkerProtocol.ToProto(ProcessFailure.From(failure)) } });
                            break;
                    }
                },
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default));
        }

        private void Refuse(ulong id, Proto.RefusalReason reason, string message)
        {
            RemoteMetrics.CountJobFailed(reason.ToString());
            pool.Return(1);
            Send(new Proto.PoolFrame { Done = new Proto.Done { JobId = id, Refused = new Proto.Refused { Reason = reason, Message = message } } });
        }

        // Frames come from the reading loop and from worker threads: one writer loop sends them in order.
        private void Send(Proto.PoolFrame frame) => _outbound.Writer.TryWrite(frame);

        private async Task WriteLoopAsync()
        {
            while (await _outbound.Reader.WaitToReadAsync().ConfigureAwait(false))
            {
                while (_outbound.Reader.TryRead(out Proto.PoolFrame? frame))
                {
                    try
                    {
                        await responses.WriteAsync(frame).ConfigureAwait(false);
                    }
                    catch (Exception e) when (e is IOException or OperationCanceledException or InvalidOperationException)
                    {
                        // The client is gone: nothing more to tell it; drain so that senders never block.
                        _outbound.Writer.TryComplete();
                    }
                }
            }
        }

        private static RpcException Invalid(string message) => new(new Status(StatusCode.InvalidArgument, message));

        /// <summary>A job waiting for its code; <paramref name="Queued"/>: counted in cspnet.pool.jobs.queued, so counted out when it leaves; <paramref name="Due"/>: the timestamp its images must have arrived by.</summary>
        private sealed record Waiting(ShippedProcess Job, Dictionary<string, ShippedAssembly> Missing, string Traceparent, bool Queued, long Due);
    }

    /// <summary>Carries a refusal out of a worker thread, apart from the process's own exceptions.</summary>
    private sealed class RefusedJob(ShippingRefusedException inner) : Exception(inner.Message, inner)
    {
        public ShippingRefusedException Inner { get; } = inner;
    }

    [LoggerMessage(110, LogLevel.Information, "Reservation from '{Client}' ({Peer}): asked {Asked}, granted {Granted}")]
    private static partial void LogReserved(ILogger logger, string client, string peer, int asked, int granted);

    [LoggerMessage(111, LogLevel.Debug, "Job {JobId} ({Type}) from {Peer} started")]
    private static partial void LogJobStarted(ILogger logger, ulong jobId, string type, string peer);

    [LoggerMessage(112, LogLevel.Information, "Job {JobId} ({Type}) threw {Exception}: {Message}")]
    private static partial void LogJobFailed(ILogger logger, ulong jobId, string type, string? exception, string message);

    [LoggerMessage(113, LogLevel.Warning, "Job {JobId} ({Type}) from {Peer} refused ({Reason}): {Message}")]
    private static partial void LogJobRefused(ILogger logger, ulong jobId, string type, string peer, ShippingRefusal reason, string message);

    [LoggerMessage(114, LogLevel.Warning, "An assembly image '{Assembly}' from {Peer} was refused: {Message}")]
    private static partial void LogImageRefused(ILogger logger, string peer, string assembly, string message);

    [LoggerMessage(115, LogLevel.Debug, "A stream from {Peer} was rejected with {Status}: {Message}")]
    private static partial void LogRejected(ILogger logger, string peer, StatusCode status, string message);

    [LoggerMessage(117, LogLevel.Information, "Job {JobId} ({Type}) from {Peer} not started: its client is gone and may run it elsewhere")]
    private static partial void LogJobDropped(ILogger logger, ulong jobId, string type, string peer);

    [LoggerMessage(118, LogLevel.Warning, "The stream from {Peer} ended: {Reason}")]
    private static partial void LogExpired(ILogger logger, string peer, string reason);

    [LoggerMessage(119, LogLevel.Information, "The client {Peer} cancelled its jobs: {Running} running (cancelled, their channels poisoned), {Waiting} waiting for images (not started)")]
    private static partial void LogCancelled(ILogger logger, string peer, int running, int waiting);

    [LoggerMessage(116, LogLevel.Information, "The client {Peer} went away: {Message}; its running jobs run to their end")]
    private static partial void LogClientLost(ILogger logger, string peer, string message);
}
