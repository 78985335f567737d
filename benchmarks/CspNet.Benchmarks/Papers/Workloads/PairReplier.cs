using System.Diagnostics;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// Process B of a live pair: <c>exchanges</c> times, read on c1, then write the value back on c2.
/// Before the read of exchange <c>gateAt</c> it waits at the gate.
/// </summary>
internal sealed class PairReplier(One2OneChannel<int> c1, One2OneChannel<int> c2, int exchanges, int gateAt, LiveGate gate) : IAsyncCSPProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        for (int i = 0; i < exchanges; i++)
        {
            if (i == gateAt)
            {
                gate.ArrivedAndParking();
                await gate.Opened;
            }

            await c2.WriteAsync(await c1.ReadAsync(cancellationToken), cancellationToken);
        }
    }
}
