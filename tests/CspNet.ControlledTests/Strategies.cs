using System;
using System.Collections.Generic;

namespace CspNet.ControlledTests;

/// <summary>How a schedule picks the party that runs at each scheduling point.</summary>
internal interface IStrategy
{
    /// <summary>What the failure report calls it: "random", "PCT depth 3".</summary>
    string Name { get; }

    /// <summary>Before the run: the number of parties.</summary>
    void Start(int parties);

    /// <summary>Picks a party index from <paramref name="enabled"/> (never empty); <paramref name="current"/> is the party at the point, or -1.</summary>
    int Choose(IReadOnlyList<int> enabled, int current, int step);
}

/// <summary>Each scheduling point picks any enabled party, uniformly.</summary>
internal sealed class RandomStrategy(Random random) : IStrategy
{
    public string Name => "random";

    public void Start(int parties)
    {
    }

    public int Choose(IReadOnlyList<int> enabled, int current, int step) => enabled[random.Next(enabled.Count)];
}

/// <summary>
/// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): the parties get distinct
/// random priorities, the highest enabled one always runs, and at <c>depth - 1</c> random steps
/// the running party drops below every other. A bug that needs <c>d</c> ordering constraints is
/// found with probability at least 1/(n * k^(d-1)) per schedule for n parties and k steps,
/// which random choices at every step do not promise.
/// </summary>
internal sealed class PctStrategy(Random random, int depth, int expectedSteps) : IStrategy
{
    private int[] _priority = [];
    private readonly HashSet<int> _changePoints = [];
    private int _lowered;

    public string Name => $"PCT depth {depth}";

    public void Start(int parties)
    {
        // Initial priorities depth .. depth + n - 1, shuffled; lowered ones are below depth.
        _priority = new int[parties];
        for (int i = 0; i < parties; i++)
        {
            _priority[i] = depth + i;
        }

        random.Shuffle(_priority);
        _changePoints.Clear();
        while (_changePoints.Count < depth - 1 && _changePoints.Count < expectedSteps)
        {
            _changePoints.Add(random.Next(1, Math.Max(2, expectedSteps)));
        }

        _lowered = 0;
    }

    public int Choose(IReadOnlyList<int> enabled, int current, int step)
    {
        if (current >= 0 && _changePoints.Contains(step))
        {
            _priority[current] = depth - 1 - _lowered++;
        }

        int best = enabled[0];
        foreach (int party in enabled)
        {
            if (_priority[party] > _priority[best])
            {
                best = party;
            }
        }

        return best;
    }
}
