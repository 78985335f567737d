using System.Threading.Tasks;
using CspNet.Internal.Processes;

namespace CspNet.Remote.Collectives;

/// <summary>The collectives' blocking calls, for thread processes, over their async twins.</summary>
internal static class Blocking
{
    internal static T Wait<T>(ValueTask<T> pending, string call)
    {
        // Checked even when the answer is already there: a misuse must not depend on timing.
        ProcessContext.ThrowIfBlockingInAsyncProcess(call, call + "Async");
#pragma warning disable RS0030 // The blocking twin of an async call (refused inside async processes above).
        return pending.AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }

    internal static void Wait(ValueTask pending, string call)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess(call, call + "Async");
#pragma warning disable RS0030 // The blocking twin of an async call (refused inside async processes above).
        pending.AsTask().GetAwaiter().GetResult();
#pragma warning restore RS0030
    }
}
