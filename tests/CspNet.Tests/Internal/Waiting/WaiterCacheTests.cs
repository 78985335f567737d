using CspNet.Internal;

namespace CspNet.Tests.Internal.Waiting;

/// <summary>
/// <see cref="WaiterCache"/> keeps an owner's async waiters in one field: one waiter for either
/// direction, a pair once one was busy when another was needed, and nothing more.
/// </summary>
public class WaiterCacheTests
{
    [Fact]
    public void Rent_EmptyCache_KeepsTheWaiterAndRentsItAgainOnceGivenBack()
    {
        object? cache = null;
        AsyncWaiter<int> first = WaiterCache.Rent<int>(ref cache, isReader: true);
        Assert.Same(first, cache);

        first.Discard();
        AsyncWaiter<int> again = WaiterCache.Rent<int>(ref cache, isReader: false);

        Assert.Same(first, again);
        Assert.False(again.IsReader);
    }

    [Fact]
    public void Rent_CachedWaiterBusy_GrowsToAPairAndReusesBoth()
    {
        object? cache = null;
        AsyncWaiter<int> first = WaiterCache.Rent<int>(ref cache, isReader: true);
        AsyncWaiter<int> second = WaiterCache.Rent<int>(ref cache, isReader: false);
        Assert.NotSame(first, second);

        first.Discard();
        second.Discard();
        AsyncWaiter<int> a = WaiterCache.Rent<int>(ref cache, isReader: false);
        AsyncWaiter<int> b = WaiterCache.Rent<int>(ref cache, isReader: false);

        Assert.Equal([first, second], new[] { a, b });
    }

    [Fact]
    public void Rent_PairBusy_GivesAWaiterThatIsNotKept()
    {
        object? cache = null;
        AsyncWaiter<int> first = WaiterCache.Rent<int>(ref cache, isReader: false);
        AsyncWaiter<int> second = WaiterCache.Rent<int>(ref cache, isReader: false);
        AsyncWaiter<int> third = WaiterCache.Rent<int>(ref cache, isReader: false);
        third.Discard();

        AsyncWaiter<int> fourth = WaiterCache.Rent<int>(ref cache, isReader: false);

        Assert.NotSame(third, fourth);
        Assert.DoesNotContain(fourth, new[] { first, second });
    }

    [Fact]
    public void TryRent_WaiterInUse_RefusesUntilDiscarded()
    {
        object? cache = null;
        AsyncWaiter<int> waiter = WaiterCache.Rent<int>(ref cache, isReader: true);

        Assert.False(waiter.TryRent(isReader: true));
        waiter.Discard();
        Assert.True(waiter.TryRent(isReader: true));
    }
}
