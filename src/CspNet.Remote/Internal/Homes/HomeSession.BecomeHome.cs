using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Protocol;
using Grpc.Core;

namespace CspNet.Remote.Internal.Homes;

// link.proto, BecomeHome: the client's program asks to host a channel hosted here.
internal sealed partial class HomeSession
{
    /// <summary>The handle a BecomeHome is filed under in the running operations: it runs on no end.</summary>
    private const uint NoHandle = uint.MaxValue;

    private void BecomeHome(BecomeHome request)
    {
        ulong opId = RequireNew(request.OpId);
        if (!_node.Homes.TryGetValue(request.Name, out Home? home))
        {
            Complete(opId, new OpResult(Outcome.Error, StatusCode.NotFound, $"No channel named '{request.Name}' lives in {_node.ProgramLabel} now: resolve the name again (it may have moved)."));
            return;
        }

        if (_node.GiveHome is not { } give)
        {
            Complete(opId, new OpResult(Outcome.Error, StatusCode.FailedPrecondition, $"{_node.ProgramLabel} has no NameServer: its channels do not move."));
            return;
        }

        if (!System.Linq.Enumerable.Contains(home.Holders, this))
        {
            Complete(opId, new OpResult(Outcome.Error, StatusCode.FailedPrecondition, $"{_peer} holds no end of '{request.Name}' at {_node.ProgramLabel}: only a program holding ends of a channel can host it."));
            return;
        }

        if (RefusedOverOperations(opId))
        {
            return;
        }

        var cts = new CancellationTokenSource();
        _running[opId] = new RunningOp(NoHandle, cts, null);
        Interlocked.Increment(ref _runningCount);
        _ = AnswerBecomeHomeAsync(opId, cts, give(home, this, cts.Token));
    }

    private async Task AnswerBecomeHomeAsync(ulong opId, CancellationTokenSource cts, Task giving)
    {
        OpResult result;
        try
        {
            await giving.ConfigureAwait(false);
            result = OpResult.Ok;
        }
        catch (OperationCanceledException) when (cts.IsCancellationRequested)
        {
            result = OpResult.Cancelled;
        }
        catch (InvalidOperationException e)
        {
            result = new OpResult(Outcome.Error, StatusCode.FailedPrecondition, e.Message);
        }
#pragma warning disable CA1031 // Reported to the program that asked; the home goes on serving.
        catch (Exception e)
#pragma warning restore CA1031
        {
            result = new OpResult(Outcome.Error, StatusCode.Internal, e.GetType().Name + ": " + e.Message);
        }

        _running.TryRemove(opId, out _);
        Interlocked.Decrement(ref _runningCount);
        GC.KeepAlive(cts);
        Complete(opId, result);
    }
}
