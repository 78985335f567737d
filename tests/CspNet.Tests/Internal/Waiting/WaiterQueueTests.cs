using CspNet.Internal;

namespace CspNet.Tests.Internal.Waiting;

/// <summary>
/// <see cref="WaiterQueue{T}"/> stores its head only (the head's Previous link is the tail): order,
/// removal anywhere and insertion in front keep every link right.
/// </summary>
public class WaiterQueueTests
{
    [Fact]
    public void Enqueue_ThreeWaiters_DequeuedInOrderThenEmpty()
    {
        var queue = default(WaiterQueue<int>);
        TestWaiter[] waiters = [new(), new(), new()];
        foreach (TestWaiter waiter in waiters)
        {
            queue.Enqueue(waiter, isReader: true);
        }

        Assert.Equal(3, queue.Count);
        Assert.Same(waiters[0], queue.DequeueClaimed());
        Assert.Same(waiters[1], queue.DequeueClaimed());
        Assert.Same(waiters[2], queue.DequeueClaimed());
        Assert.Null(queue.DequeueClaimed());
        Assert.True(queue.IsEmpty);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(3)]
    public void Remove_HeadMiddleOrTail_OthersStayInOrderAndEnqueueAppendsAfterTheTail(int removed)
    {
        var queue = default(WaiterQueue<int>);
        var waiters = new TestWaiter[4];
        for (int i = 0; i < waiters.Length; i++)
        {
            waiters[i] = new TestWaiter();
            queue.Enqueue(waiters[i], isReader: false);
        }

        queue.Remove(waiters[removed]);
        var late = new TestWaiter();
        queue.Enqueue(late, isReader: false);

        List<TestWaiter> expected = [.. waiters.Where((_, i) => i != removed), late];
        Assert.False(waiters[removed].IsQueued);
        Assert.Equal(expected, Drain(ref queue));
    }

    [Fact]
    public void EnqueueFront_OnQueueAndOnEmpty_GoesFirstAndTheTailStays()
    {
        var queue = default(WaiterQueue<int>);
        var only = new TestWaiter();
        queue.EnqueueFront(only, isReader: false);
        var first = new TestWaiter();
        queue.EnqueueFront(first, isReader: false);
        var last = new TestWaiter();
        queue.Enqueue(last, isReader: false);

        Assert.Equal([first, only, last], Drain(ref queue));
    }

    [Fact]
    public void Remove_EveryWaiterThenEnqueue_QueueWorksAgain()
    {
        var queue = default(WaiterQueue<int>);
        var a = new TestWaiter();
        var b = new TestWaiter();
        queue.Enqueue(a, isReader: true);
        queue.Enqueue(b, isReader: true);
        queue.Remove(b);
        queue.Remove(a);
        Assert.True(queue.IsEmpty);
        Assert.Null(queue.HeadHint);

        queue.Enqueue(b, isReader: true);
        queue.Enqueue(a, isReader: true);
        Assert.Equal([b, a], Drain(ref queue));
    }

    private static List<TestWaiter> Drain(ref WaiterQueue<int> queue)
    {
        var order = new List<TestWaiter>();
        while (queue.DequeueClaimed() is TestWaiter waiter)
        {
            order.Add(waiter);
        }

        Assert.True(queue.IsEmpty);
        return order;
    }

    private sealed class TestWaiter : Waiter<int>
    {
        internal override Exception? Error { get; set; }

        internal override void Wake()
        {
        }
    }
}
