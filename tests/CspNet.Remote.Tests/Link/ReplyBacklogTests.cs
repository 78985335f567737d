using CspNet.Remote.Tests.Named;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Testing;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Link;

/// <summary>
/// A client that sends operations but does not read their answers: the home stops reading its
/// frames once <see cref="HomeSession.MaxQueuedReplies"/> answers wait (so its memory stays
/// bounded), and when the client reads again every answer comes, once and in order.
/// </summary>
public sealed class ReplyBacklogTests
{
    private const int Operations = 20_000;

    private static readonly Method<Proto.ClientFrame, Proto.HomeFrame> Connect = new(
        MethodType.DuplexStreaming,
        "cspnet.link.v1.Link",
        "Connect",
        Marshallers.Create(static (Proto.ClientFrame f) => f.ToByteArray(), Proto.ClientFrame.Parser.ParseFrom),
        Marshallers.Create(static (Proto.HomeFrame f) => f.ToByteArray(), Proto.HomeFrame.Parser.ParseFrom));

    [Fact(Timeout = 60_000)]
    public async Task Connect_ClientReadsNoAnswers_HomeStopsReadingItsFramesAndLosesNoAnswer()
    {
        var backlogged = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var logs = FakeLogCollector.Create(new FakeLogCollectorOptions
        {
            OutputSink = line =>
            {
                if (line.Contains("replies wait for the client", StringComparison.Ordinal))
                {
                    backlogged.TrySetResult();
                }
            },
        });
        using var provider = new FakeLoggerProvider(logs);
        using ILoggerFactory loggers = LoggerFactory.Create(b => b.AddProvider(provider).SetMinimumLevel(LogLevel.Debug));
        await using TestSystem system = await TestSystem.StartAsync();
        CspNode home = await system.NodeAsync("home", o => o.LoggerFactory = loggers);

        using var channel = UserKey.Channel($"http://127.0.0.1:{home.Port}");
        using AsyncDuplexStreamingCall<Proto.ClientFrame, Proto.HomeFrame> call = channel.CreateCallInvoker().AsyncDuplexStreamingCall(Connect, null, default);

        // Every Read names a handle never attached, so each is answered at once (NOT_FOUND).
        Task sending = Task.Run(async () =>
        {
            await call.RequestStream.WriteAsync(new Proto.ClientFrame { Hello = new Proto.Hello { ProtocolVersion = 1, Program = "slow reader" } });
            for (ulong op = 1; op <= Operations; op++)
            {
                await call.RequestStream.WriteAsync(new Proto.ClientFrame { Read = new Proto.Read { Handle = 7, OpId = op } });
            }

            await call.RequestStream.CompleteAsync();
        });

        await backlogged.Task; // the home stopped reading: the sender now waits in HTTP/2 flow control
        Assert.False(sending.IsCompleted);

        Assert.True(await call.ResponseStream.MoveNext());
        Assert.Equal(Proto.HomeFrame.BodyOneofCase.Hello, call.ResponseStream.Current.BodyCase);
        for (ulong op = 1; op <= Operations; op++)
        {
            Assert.True(await call.ResponseStream.MoveNext());
            Proto.Completed completed = call.ResponseStream.Current.Completed;
            Assert.Equal(op, completed.OpId);
            Assert.Equal((int)StatusCode.NotFound, completed.Status);
        }

        await sending;
        Assert.False(await call.ResponseStream.MoveNext());
        Assert.Equal(StatusCode.OK, call.GetStatus().StatusCode);
    }
}
