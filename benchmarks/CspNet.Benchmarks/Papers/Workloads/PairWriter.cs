using System.Diagnostics;

namespace CspNet.Benchmarks.Papers;

/// <summary>
/// Process A of a live pair (JVMCSP section 3.3): <c>exchanges</c> times, write on c1, then read
/// the reply on c2. Before the write of exchange <c>gateAt</c> it counts itself as parked: its
/// partner is held at the gate then, so that write parks on c1 holding its value.
/// </summary>
internal sealed class PairWriter(One2OneChannel<int> c1, One2OneChannel<int> c2, int exchanges, int gateAt, LiveGate gate) : IAsyncCSPProcess
{
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        for (int i = 0; i < exchanges; i++)
        {
            if (i == gateAt)
            {
                gate.ArrivedAndParking();
            }

            await c1.WriteAsync(i, cancellationToken);
            PaperChannels.Check(await c2.ReadAsync(cancellationToken), i, "Live pair");
        }
    }
}
