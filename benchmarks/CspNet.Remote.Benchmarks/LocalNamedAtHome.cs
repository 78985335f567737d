using BenchmarkDotNet.Attributes;
using CspNet.NameServer;

namespace CspNet.Remote.Benchmarks;

/// <summary>
/// What a program pays for its own ends of a named unbuffered Any2Any channel it hosts, now that
/// they follow the channel if another program takes its home (CspNode.BecomeHomeAsync): writes
/// and reads between two processes of the home program, both on ends from the getters.
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item><see cref="CoreEnds"/> (baseline): the same channel created with <c>local: true</c>, whose
/// getters return the core channel's own ends, as every channel's did before.</item>
/// <item><see cref="FollowingEnds"/>: a distributed one, whose getters at the home return
/// following ends (the core end, with a token a move cancels).</item>
/// </list>
/// Run: <c>dotnet run -c Release --project benchmarks/CspNet.Remote.Benchmarks -- --filter *LocalNamedAtHome*</c>;
/// the Ratio column is the figure.
/// </remarks>
[MemoryDiagnoser]
public class LocalNamedAtHome
{
    /// <summary>Values per invocation.</summary>
    public const int Values = 1_000;

    private NameServerHost? _nameServer;
    private CspNode? _node;
    private AltingChannelOut<int> _coreOut = null!;
    private AltingChannelIn<int> _coreIn = null!;
    private AltingChannelOut<int> _followingOut = null!;
    private AltingChannelIn<int> _followingIn = null!;

    [GlobalSetup]
    public async Task SetupAsync()
    {
        _nameServer = await NameServerHost.StartAsync();
        _node = await CspNode.StartAsync(new CspNodeOptions { NameServer = _nameServer.Uri, ProgramLabel = "bench-home" });
        _coreOut = await _node.GetAny2AnyOutAsync<int>("bench/core", local: true);
        _coreIn = await _node.GetAny2AnyInAsync<int>("bench/core", local: true);
        _followingOut = await _node.GetAny2AnyOutAsync<int>("bench/following");
        _followingIn = await _node.GetAny2AnyInAsync<int>("bench/following");
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        await _node!.DisposeAsync();
        await _nameServer!.DisposeAsync();
    }

    /// <summary>Core ends: one process writes, another reads, <see cref="Values"/> values.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = Values)]
    public Task CoreEnds() => ExchangeAsync(_coreOut, _coreIn);

    /// <summary>Following ends of a channel that can move: the same exchange.</summary>
    [Benchmark(OperationsPerInvoke = Values)]
    public Task FollowingEnds() => ExchangeAsync(_followingOut, _followingIn);

    private static async Task ExchangeAsync(AltingChannelOut<int> output, AltingChannelIn<int> input)
    {
        Task reading = Task.Run(async () =>
        {
            for (int i = 0; i < Values; i++)
            {
                _ = await input.ReadAsync();
            }
        });
        for (int i = 0; i < Values; i++)
        {
            await output.WriteAsync(i);
        }

        await reading;
    }
}
