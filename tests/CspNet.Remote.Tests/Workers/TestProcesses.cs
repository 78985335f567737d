using System.Collections.Concurrent;

namespace CspNet.Remote.Tests.Workers;

/// <summary>Records which node (program) it ran on.</summary>
internal sealed class WhereAmI : ICSPProcess
{
    internal static readonly ConcurrentDictionary<Guid, string> Seen = new();

    public Guid Id { get; } = Guid.NewGuid();

    public void Run() => Seen[Id] = CspManager.Node.ProgramLabel;
}

/// <summary>Throws, with an inner exception.</summary>
internal sealed class Thrower : ICSPProcess
{
    public void Run() => throw new InvalidOperationException("outer failure", new FormatException("inner failure"));
}

/// <summary>Signals that it started, then blocks until released.</summary>
internal sealed class Blocker : ICSPProcess
{
    public TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public ManualResetEventSlim Release { get; } = new();

    public void Run()
    {
        Started.TrySetResult();
        Release.Wait();
    }
}
