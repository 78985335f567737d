using System.Threading;

namespace CspNet.Internal.Processes;

/// <summary>
/// A process start queued to a <see cref="CSPThreadPool"/>: the work, what to call when it has
/// ended, and the thread's priority meanwhile. One object, so that a start allocates nothing: a
/// parallel's thread-process entry is its own start (it was two delegates, a closure per process
/// and run).
/// </summary>
internal interface IPooledStart
{
    /// <summary>The priority of the thread while it runs the process.</summary>
    ThreadPriority Priority { get; }

    /// <summary>Runs the process on the pool thread; never throws.</summary>
    void Run();

    /// <summary>The process has ended and its thread is back in the pool.</summary>
    void Ended();
}
