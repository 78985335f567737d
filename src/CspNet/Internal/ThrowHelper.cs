using System;

namespace CspNet.Internal;

/// <summary>Builds the exceptions the library throws, with messages that say what to do.</summary>
internal static class ThrowHelper
{
    internal static PoisonException Poisoned(string kind) =>
        new($"{kind} has been poisoned: no further communication is possible on it. " +
            "Catch PoisonException to shut the process down, and poison its other channels to pass the shutdown on.");

    internal static InvalidOperationException SharedOneEnd(string kind, bool isReader) =>
        new(isReader
            ? $"Two processes are reading from the single reading end of {kind} at the same time. " +
              "Use a One2AnyChannel or Any2AnyChannel if several processes must read: only those share their reading end."
            : $"Two processes are writing to the single writing end of {kind} at the same time. " +
              "Use an Any2OneChannel or Any2AnyChannel if several processes must write.");
}
