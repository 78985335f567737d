using System.Reflection;
using System.Runtime.CompilerServices;
using Barrier = CspNet.Barrier;
using Parallel = CspNet.Parallel;

namespace CspNet.Tests.Barriers;

/// <summary>
/// A <see cref="Barrier.SyncAsync"/> rejected as misuse (nobody enrolled) must not leave its
/// cancellation registration behind: the token would keep the barrier's state (and a waiter)
/// alive for as long as the token lives, e.g. an application-lifetime token.
/// </summary>
public class BarrierMisuseLeakTests
{
    [Fact]
    public void SyncAsync_CompletedAtOnceWithToken_TokenDoesNotKeepBarrierAlive()
    {
        // Control: the same measurement on a sync that passes at once shows nothing is retained,
        // so the test below measures the misuse path only.
        using var cancellation = new CancellationTokenSource();
        WeakReference core = SyncOnce(enrolled: 1, cancellation.Token);

        Collect();

        Assert.False(core.IsAlive, "A sync that passed at once left the barrier reachable from the token.");
        GC.KeepAlive(cancellation);
    }

    [Fact]
    public void SyncAsync_NoneEnrolledWithToken_TokenDoesNotKeepBarrierAlive()
    {
        using var cancellation = new CancellationTokenSource();
        WeakReference core = SyncOnce(enrolled: 0, cancellation.Token);

        Collect();

        Assert.False(core.IsAlive, "SyncAsync failed with InvalidOperationException but left its cancellation registration (holding the barrier) on the token.");
        GC.KeepAlive(cancellation);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference SyncOnce(int enrolled, CancellationToken token)
    {
        // Created here, not by the caller: unoptimised code may keep a caller's temporaries alive.
        var barrier = new Barrier(enrolled);

        // The barrier's internal state is what a leaked registration would hold (through its waiter).
        object core = typeof(Barrier).GetField("_core", BindingFlags.Instance | BindingFlags.NonPublic)!.GetValue(barrier)!;
        if (enrolled == 0)
        {
            ValueTask sync = barrier.SyncAsync(token);
            Assert.True(sync.IsFaulted);
            Assert.IsType<InvalidOperationException>(sync.AsTask().Exception!.InnerException);
        }
        else
        {
            Assert.True(AtOnce.Succeeded(barrier.SyncAsync(token)));
        }

        return new WeakReference(core);
    }

    private static void Collect()
    {
        for (int i = 0; i < 3; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    }
}
