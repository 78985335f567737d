namespace CspNet;

/// <summary>
/// A process that runs on its own operating-system thread: implement <see cref="Run"/> with
/// ordinary blocking code, communicating through channels.
/// </summary>
/// <remarks>
/// Run processes with <see cref="Parallel"/>, which gives each one a thread from a
/// <see cref="CSPThreadPool"/>. For processes that should hold no thread while they wait, see
/// <see cref="IAsyncCSPProcess"/>.
/// </remarks>
public interface ICSPProcess
{
    /// <summary>The process body. The process ends when this returns or throws.</summary>
    void Run();
}
