namespace CspNet.Benchmarks.Papers;

/// <summary>
/// JVMCSP's own Table 3 program (section 3.3), written with CspNet's public API as a user would:
/// <code>
/// proc void foo(chan&lt;int&gt;.read c1r, chan&lt;int&gt;.write c2w) { int x; par { x = c1r.read(); c2w.write(10); } }
/// proc void bar(chan&lt;int&gt;.write c1w, chan&lt;int&gt;.read c2r) { int y; par { y = c2r.read(); c1w.write(20); } }
/// proc void main(string[] args) { par for (int i = 0; i &lt; n; i++) { chan&lt;int&gt; c1, c2; par { foo(c1.read, c2.write); bar(c1.write, c2.read); } } }
/// </code>
/// The <c>par for</c> is one <see cref="Parallel"/>; each iteration adds a <see cref="Parallel"/>
/// of <c>foo</c> and <c>bar</c>, each a <see cref="Parallel"/> of one read and one write (async
/// processes) over the iteration's two <see cref="One2OneChannel{T}"/>. JVMCSP counts 7 processes
/// per iteration (the iteration's par, foo, bar and the four statements of their pars) plus main.
/// </summary>
/// <remarks>
/// To measure every process alive at once, as JVMCSP's run queue held them, each read first
/// reports at a shared gate and waits for it to open, and each write reports and then parks
/// holding its value; the gate opens once all have reported. The gate's continuation list costs
/// 8 bytes per read (16 per iteration), included in the figures.
/// </remarks>
internal static class JvmcspProgram
{
    /// <summary>Processes per iteration as JVMCSP counts them.</summary>
    internal const int ProcessesPerIteration = 7;

    /// <summary>Runs <paramref name="iterations"/> iterations through <see cref="LiveRunner"/>.</summary>
    /// <param name="iterations">Iterations of the par for requested.</param>
    /// <param name="measureMemory">Force full collections to measure live bytes (slow on big heaps; not timed).</param>
    /// <param name="minAvailableBytes">Memory guard (0: none); see <see cref="LiveRunner.Run"/>.</param>
    /// <param name="runningBytesPerIteration">Estimate of what one iteration allocates once running, for the guard.</param>
    /// <param name="log">Progress messages, or null.</param>
    internal static LiveResult Run(long iterations, bool measureMemory, long minAvailableBytes = 0, double runningBytesPerIteration = 1000, Action<string>? log = null) =>
        LiveRunner.Run(iterations, (ProcessesPerIteration, 1), 4, AddIteration, measureMemory, minAvailableBytes, runningBytesPerIteration, log);

    /// <summary>One iteration of the par for: its channels and its par of foo and bar.</summary>
    internal static void AddIteration(Parallel main, LiveGate gate)
    {
        var c1 = new One2OneChannel<int>();
        var c2 = new One2OneChannel<int>();
        var iteration = new Parallel();
        iteration.AddProcess(Foo(c1, c2, gate));
        iteration.AddProcess(Bar(c1, c2, gate));
        main.AddProcess(iteration);
    }

    private static Parallel Foo(IChannelIn<int> c1r, IChannelOut<int> c2w, LiveGate gate) =>
        new(new JvmcspRead(c1r, gate), new JvmcspWrite(c2w, 10, gate));

    private static Parallel Bar(IChannelOut<int> c1w, IChannelIn<int> c2r, LiveGate gate) =>
        new(new JvmcspRead(c2r, gate), new JvmcspWrite(c1w, 20, gate));

    /// <summary><c>x = c.read()</c>, after the gate.</summary>
    private sealed class JvmcspRead(IChannelIn<int> input, LiveGate gate) : IAsyncCSPProcess
    {
        internal int Value { get; private set; }

        public async Task RunAsync(CancellationToken cancellationToken)
        {
            gate.ArrivedAndParking();
            await gate.Opened;
            Value = await input.ReadAsync(cancellationToken);
        }
    }

    /// <summary><c>c.write(value)</c>: parks holding the value until the reader passes the gate.</summary>
    private sealed class JvmcspWrite(IChannelOut<int> output, int value, LiveGate gate) : IAsyncCSPProcess
    {
        public async Task RunAsync(CancellationToken cancellationToken)
        {
            gate.ArrivedAndParking();
            await output.WriteAsync(value, cancellationToken);
        }
    }
}
