using System.Threading.Channels;

namespace CspNet.Benchmarks.Papers;

/// <summary>Creates unbuffered channels of a given kind.</summary>
internal static class PaperChannels
{
    internal static CspChannel<int> Create(ChannelKind kind) => kind switch
    {
        ChannelKind.One2One => new One2OneChannel<int>(),
        ChannelKind.Any2One => new Any2OneChannel<int>(),
        ChannelKind.One2Any => new One2AnyChannel<int>(),
        ChannelKind.Any2Any => new Any2AnyChannel<int>(),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Unknown channel kind."),
    };

    /// <summary>A System.Threading.Channels rendezvous channel (capacity 0 is a RendezvousChannel on .NET 10).</summary>
    internal static Channel<int> CreateRendezvous() =>
        Channel.CreateBounded<int>(new BoundedChannelOptions(0) { SingleReader = true, SingleWriter = true });

    internal static void Check(int actual, int expected, string what)
    {
        if (actual != expected)
        {
            throw new InvalidOperationException($"{what} out of step: expected {expected}, got {actual}.");
        }
    }
}
