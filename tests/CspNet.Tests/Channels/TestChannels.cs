namespace CspNet.Tests.Channels;

/// <summary>The four channel kinds, so that one test can run against each of them.</summary>
public enum ChannelKind
{
    One2One,
    Any2One,
    One2Any,
    Any2Any,
}

/// <summary>Which kind of process each party of a test is.</summary>
public enum PartyMode
{
    /// <summary>Every party is a blocking thread process.</summary>
    Threads,

    /// <summary>Every party is an async process.</summary>
    Async,

    /// <summary>Thread and async processes alternate on each end.</summary>
    Mixed,
}

/// <summary>Creates channels by kind and says what each kind allows.</summary>
internal static class TestChannels
{
    internal static CspChannel<T> Create<T>(ChannelKind kind) => kind switch
    {
        ChannelKind.One2One => new One2OneChannel<T>(),
        ChannelKind.Any2One => new Any2OneChannel<T>(),
        ChannelKind.One2Any => new One2AnyChannel<T>(),
        ChannelKind.Any2Any => new Any2AnyChannel<T>(),
        _ => throw new ArgumentOutOfRangeException(nameof(kind)),
    };

    internal static CspChannel<T> Create<T>(ChannelKind kind, IBuffer<T> buffer) => kind switch
    {
        ChannelKind.One2One => new One2OneChannel<T>(buffer),
        ChannelKind.Any2One => new Any2OneChannel<T>(buffer),
        ChannelKind.One2Any => new One2AnyChannel<T>(buffer),
        ChannelKind.Any2Any => new Any2AnyChannel<T>(buffer),
        _ => throw new ArgumentOutOfRangeException(nameof(kind)),
    };

    /// <summary>Whether several processes may write at once.</summary>
    internal static bool SharedWriter(ChannelKind kind) => kind is ChannelKind.Any2One or ChannelKind.Any2Any;

    /// <summary>Whether several processes may read at once.</summary>
    internal static bool SharedReader(ChannelKind kind) => kind is ChannelKind.One2Any or ChannelKind.Any2Any;

    public static TheoryData<ChannelKind> AllKinds => new(Enum.GetValues<ChannelKind>());

    /// <summary>Whether the operation completed successfully at once; consumes it if so.</summary>
    internal static bool CompletedAtOnce(ValueTask operation)
    {
        if (!operation.IsCompletedSuccessfully)
        {
            return false;
        }

        operation.GetAwaiter().GetResult();
        return true;
    }

    /// <summary>
    /// Asserts that nothing can be read now: a read parks (and is then cancelled, taking nothing).
    /// Only for channels where the test has no other reader parked on a One end.
    /// </summary>
    internal static async Task AssertNothingToReadAsync<T>(IChannelIn<T> channel)
    {
        using var cancellation = new CancellationTokenSource();
        ValueTask<T> read = channel.ReadAsync(cancellation.Token);
        bool completed = read.IsCompleted;
        await cancellation.CancelAsync();
        if (completed)
        {
            Assert.Fail($"Expected nothing to read, but a read completed at once with {await read}.");
        }

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read.AsTask());
    }
}
