using System.Diagnostics;
using System.Threading;

namespace CspNet.Internal.Scheduling;

/// <summary>
/// The engine's scheduling points, for the controlled scheduler of the systematic tests
/// (tests/CspNet.ControlledTests, docs/ARCHITECTURE.md "The systematic tests").
/// </summary>
/// <remarks>
/// Every method is <see cref="ConditionalAttribute">conditional</see> on <c>CSPNET_CONTROLLED</c>,
/// a symbol only the test assembly that compiles the engine's sources a second time defines: in
/// the shipping CspNet.dll the compiler drops every call, so its method bodies are the same IL
/// as without them. In the controlled build each point hands the test's scheduler a chance to run
/// another party (<c>IControlHooks</c>).
/// </remarks>
internal static class ControlPoint
{
#if CSPNET_CONTROLLED
    /// <summary>The running test's scheduler; null outside a controlled schedule.</summary>
    internal static IControlHooks? Hooks;
#endif

    /// <summary>Before a channel or alternation takes <paramref name="gate"/> (a <c>lock</c> statement).</summary>
    [Conditional("CSPNET_CONTROLLED")]
    internal static void BeforeLock(object gate)
    {
#if CSPNET_CONTROLLED
        Hooks?.BeforeLock(gate);
#endif
    }

    /// <summary>Before a barrier or bucket takes <paramref name="gate"/>.</summary>
    [Conditional("CSPNET_CONTROLLED")]
    internal static void BeforeLock(Lock gate)
    {
#if CSPNET_CONTROLLED
        Hooks?.BeforeLock(gate);
#endif
    }

    /// <summary>Before a thread parks on <paramref name="signal"/>: the controlled scheduler runs others until it is set.</summary>
    [Conditional("CSPNET_CONTROLLED")]
    internal static void BeforePark(ManualResetEventSlim signal)
    {
#if CSPNET_CONTROLLED
        Hooks?.BeforePark(signal);
#endif
    }

    /// <summary>After a party was woken (its event set or its continuation dispatched), outside any lock.</summary>
    [Conditional("CSPNET_CONTROLLED")]
    internal static void AfterWake()
    {
#if CSPNET_CONTROLLED
        Hooks?.Step();
#endif
    }

    /// <summary>Before a lock-free step of an alternation's state (the compare-and-swaps that park or withdraw it).</summary>
    [Conditional("CSPNET_CONTROLLED")]
    internal static void BeforeStateChange()
    {
#if CSPNET_CONTROLLED
        Hooks?.Step();
#endif
    }

    /// <summary>An async party registers <paramref name="owner"/>'s continuation: its completion belongs to that party.</summary>
    [Conditional("CSPNET_CONTROLLED")]
    internal static void Awaiting(IHandOff owner)
    {
#if CSPNET_CONTROLLED
        Hooks?.Awaiting(owner);
#endif
    }
}

#if CSPNET_CONTROLLED
/// <summary>What the controlled scheduler does at each scheduling point (see <see cref="ControlPoint"/>).</summary>
internal interface IControlHooks
{
    /// <summary>A lock is about to be taken: a scheduling point unless the thread holds an engine lock already.</summary>
    void BeforeLock(object gate);

    /// <summary>As <see cref="BeforeLock(object)"/>, for a <see cref="Lock"/>.</summary>
    void BeforeLock(Lock gate);

    /// <summary>The thread would park: run the others until <paramref name="signal"/> is set.</summary>
    void BeforePark(ManualResetEventSlim signal);

    /// <summary>A scheduling point outside any lock.</summary>
    void Step();

    /// <summary>The current party awaits <paramref name="owner"/>'s completion.</summary>
    void Awaiting(IHandOff owner);

    /// <summary>A continuation is dispatched: queue it to the party that awaits it. False to dispatch it as usual.</summary>
    bool Dispatch(IHandOff item);
}
#endif
