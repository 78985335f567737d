using Microsoft.Coyote.Specifications;

namespace CspNet.SystematicTests;

/// <summary>The properties every scenario checks, as Coyote assertions (a failed one is a bug with a replayable schedule).</summary>
internal static class Check
{
    /// <summary>Values are writer * 1000 + sequence number: each reader must see every writer's values rising.</summary>
    internal static int Value(int writer, int sequence) => (writer * 1000) + sequence;

    /// <summary>Per-writer FIFO for one reader's values, in the order it got them.</summary>
    internal static void WriterOrder(IReadOnlyList<int> seen, string who)
    {
        var last = new Dictionary<int, int>();
        foreach (int value in seen)
        {
            int writer = value / 1000;
            int sequence = value % 1000;
            Specification.Assert(
                !last.TryGetValue(writer, out int previous) || sequence > previous,
                "{0} saw writer {1}'s value {2} after {3}: out of order (seen: {4}).", who, writer, sequence, previous, string.Join(",", seen));
            last[writer] = sequence;
        }
    }

    /// <summary>No value lost or duplicated: everything read, by whoever, is exactly what was written.</summary>
    internal static void ExactlyOnce(IEnumerable<int> read, IEnumerable<int> written)
    {
        var got = read.Order().ToList();
        var want = written.Order().ToList();
        Specification.Assert(got.SequenceEqual(want), "Read [{0}] but wrote [{1}]: a value was lost or duplicated.", string.Join(",", got), string.Join(",", want));
    }
}
