using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Internal;

/// <summary>A thread process whose body is a delegate.</summary>
internal sealed class DelegateProcess(Action run) : ICSPProcess
{
    public void Run() => run();
}

/// <summary>An async process whose body is a delegate.</summary>
internal sealed class AsyncDelegateProcess(Func<CancellationToken, Task> runAsync) : IAsyncCSPProcess
{
    /// <summary>The delegate's method, for error messages.</summary>
    internal string Name => $"{runAsync.Method.DeclaringType?.FullName}.{runAsync.Method.Name}";

    public Task RunAsync(CancellationToken cancellationToken) => runAsync(cancellationToken);
}
