using System.Diagnostics;
using System.Reflection;
using System.Text.RegularExpressions;
using Barrier = CspNet.Barrier;

namespace CspNet.Tests.Barriers;

/// <summary>
/// <see cref="Barrier"/> and <see cref="Bucket"/> show their state in the debugger, without taking
/// their lock (a debugger evaluates while every thread is frozen, possibly one holding the lock).
/// </summary>
public partial class DebuggerDisplayTests
{
    private static readonly TimeSpan WaitLimit = TimeSpan.FromSeconds(10);

    [Fact(Timeout = 10_000)]
    public async Task Barrier_DebuggerDisplay_ShowsEnrolledWaitingAndPoisoned()
    {
        var barrier = new Barrier(2);
        Task waiting = barrier.SyncAsync().AsTask();

        Assert.Equal("Enrolled = 2, Waiting = 1, Poisoned = False", Display(barrier));

        barrier.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => waiting);
        Assert.Equal("Enrolled = 2, Waiting = 0, Poisoned = True", Display(barrier));
    }

    [Fact(Timeout = 10_000)]
    public async Task Bucket_DebuggerDisplay_ShowsHoldingAndPoisoned()
    {
        var bucket = new Bucket();
        Task held = bucket.FallAsync().AsTask();

        Assert.Equal("Holding = 1, Poisoned = False", Display(bucket));

        bucket.Poison();
        await Assert.ThrowsAsync<PoisonException>(() => held);
        Assert.Equal("Holding = 0, Poisoned = True", Display(bucket));
    }

    [Fact(Timeout = 30_000)]
    public async Task DebuggerDisplay_LockHeldByAnotherThread_DoesNotWaitForIt()
    {
        foreach (object owner in new object[] { new Barrier(3), new Bucket() })
        {
            using var held = new ManualResetEventSlim();
            using var release = new ManualResetEventSlim();
            Task holder = Party.OnThread(() =>
            {
                using (GateOf(owner).EnterScope())
                {
                    held.Set();
                    Assert.True(release.Wait(WaitLimit));
                }
            });
            Assert.True(held.Wait(WaitLimit));

            try
            {
                await Party.OnThread(() => Display(owner)).WaitAsync(WaitLimit);
            }
            catch (TimeoutException)
            {
                Assert.Fail($"The {owner.GetType().Name}'s debugger display waited for its lock: a debugger would hang.");
            }
            finally
            {
                release.Set();
            }

            await holder;
        }
    }

    /// <summary>Evaluates the object's [DebuggerDisplay] the way a debugger does: the member named in braces.</summary>
    private static string Display(object value)
    {
        DebuggerDisplayAttribute attribute = Assert.Single(value.GetType().GetCustomAttributes<DebuggerDisplayAttribute>());
        Match member = MemberReference().Match(attribute.Value);
        Assert.True(member.Success, $"Expected \"{{Member,nq}}\", found \"{attribute.Value}\".");
        PropertyInfo? property = value.GetType().GetProperty(member.Groups["name"].Value, BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
        Assert.NotNull(property);
        return Assert.IsType<string>(property.GetValue(value));
    }

    /// <summary>The lock of the barrier's or bucket's internal state.</summary>
    private static Lock GateOf(object owner)
    {
        object core = owner.GetType().GetField("_core", BindingFlags.Instance | BindingFlags.NonPublic)!.GetValue(owner)!;
        PropertyInfo gate = typeof(CspNet.Internal.SyncPoint).GetProperty("Gate", BindingFlags.Instance | BindingFlags.NonPublic)!;
        return (Lock)gate.GetValue(core)!;
    }

    [GeneratedRegex(@"^\{(?<name>\w+),nq\}$")]
    private static partial Regex MemberReference();
}
