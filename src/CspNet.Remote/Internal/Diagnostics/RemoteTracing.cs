using System.Diagnostics;
using CspNet.Remote.Diagnostics;

namespace CspNet.Remote.Internal.Diagnostics;

/// <summary>
/// The activities of the <c>CspNet.Remote</c> source (docs/TELEMETRY.md) and the W3C trace context
/// (<c>traceparent</c>) they carry to the other program in a Link <c>Write</c> frame or a worker
/// pool's <c>Job</c>. Nothing is started, and an empty traceparent is sent, while no one listens.
/// </summary>
internal static class RemoteTracing
{
    internal const string SendName = "cspnet.channel.send";
    internal const string ReceiveName = "cspnet.channel.receive";
    internal const string JobName = "cspnet.pool.job";
    internal const string ProcessName = "cspnet.pool.process";
    internal const string ChannelNameTag = "cspnet.channel.name";
    internal const string ProcessTypeTag = "cspnet.process.type";
    internal const string PoolNameTag = "cspnet.pool.name";

    internal static readonly ActivitySource Source = new(CspNetRemoteTelemetry.ActivitySourceName, typeof(RemoteTracing).Assembly.GetName().Version?.ToString());

    /// <summary>
    /// The writer's side of a remote write, a child of the caller's current activity. It is not made
    /// current: the write returns to its caller before it ends (<see cref="Activity.Current"/> is
    /// an async-local, and a started activity would stay current in the caller's flow).
    /// </summary>
    internal static Activity? StartSend(string channel)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        Activity? previous = Activity.Current;
        Activity? activity = Source.StartActivity(SendName, ActivityKind.Producer);
        Activity.Current = previous;
        if (activity is not null)
        {
            activity.DisplayName = "send " + channel;
            activity.SetTag(ChannelNameTag, channel);
        }

        return activity;
    }

    /// <summary>
    /// The home's side of a remote write: a child of the writer's activity, whose
    /// <paramref name="traceparent"/> came in the Write frame (a root activity when it is empty or
    /// malformed). Not made current: the receiving loop goes on to other frames.
    /// </summary>
    internal static Activity? StartReceive(string traceparent)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        Activity? previous = Activity.Current;
        ActivityContext.TryParse(traceparent, null, isRemote: true, out ActivityContext parent);
        Activity? activity = Source.StartActivity(ReceiveName, ActivityKind.Consumer, parent);
        Activity.Current = previous;
        return activity;
    }

    /// <summary>A process shipped by DistParallel, on the client: from sending the job to its Done. Current in the caller's (async) flow.</summary>
    internal static Activity? StartJob(string processType, string pool)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        Activity? activity = Source.StartActivity(JobName, ActivityKind.Client);
        activity?.SetTag(ProcessTypeTag, processType);
        activity?.SetTag(PoolNameTag, pool);
        return activity;
    }

    /// <summary>
    /// A shipped process running on a pool worker's thread, a child of the client's job activity.
    /// Current on that thread, so the process's own remote writes join the same trace.
    /// </summary>
    internal static Activity? StartProcess(string traceparent, string processType)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        ActivityContext.TryParse(traceparent, null, isRemote: true, out ActivityContext parent);
        Activity? activity = Source.StartActivity(ProcessName, ActivityKind.Server, parent);
        activity?.SetTag(ProcessTypeTag, processType);
        return activity;
    }

    /// <summary>The W3C traceparent of <paramref name="activity"/>, or empty (protobuf's default string, not sent) when there is none.</summary>
    internal static string Traceparent(Activity? activity) =>
        activity is { IdFormat: ActivityIdFormat.W3C, Id: { } id } ? id : string.Empty;

    /// <summary>Ends an activity with an error status when <paramref name="error"/> says the operation failed.</summary>
    internal static void Stop(Activity? activity, string? error)
    {
        if (activity is null)
        {
            return;
        }

        if (error is not null)
        {
            activity.SetStatus(ActivityStatusCode.Error, error);
        }

        activity.Stop();
    }
}
