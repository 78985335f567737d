using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal.Processes;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal;

/// <summary>
/// A writing end whose channel lives in another program. A write sends the value over the link
/// and completes when the home answers that a reader took it (or the buffer accepted it), exactly
/// as a local write; a cancelled write is cancelled at the home, and whichever of the two happened
/// first there is what the caller sees.
/// </summary>
/// <remarks>Like a local end, it belongs to one process; a shared (Any) end may be used by several.</remarks>
internal sealed class RemoteChannelOut<T>(PeerLink link, uint handle, ValueCodec<T> codec, string name, long maxValueSize) : IChannelOut<T>
{
    public void Write(T value)
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Write(value)", "WriteAsync(value)");
        WriteAsync(value).AsTask().GetAwaiter().GetResult();
    }

    public async ValueTask WriteAsync(T value, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        PooledValueBuffer bytes = ValueEncoder.EncodePooled(codec, value, maxValueSize);
        PendingOp op = link.Begin();
        link.SendValue(op.Id, bytes.WrittenMemory, last => new ClientFrame { Write = new Write { Handle = handle, OpId = op.Id, Data = last } });
        Completion completion = await link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        if (completion.Lost is null)
        {
            // The home answered, so it had every frame: nothing reads the buffer any more.
            bytes.Return();
        }

        completion.ThrowIfFailed($"Writing to '{name}'", cancellationToken);
    }

    public void Poison() => link.Poison(handle);

    public override string ToString() => $"writing end of '{name}' at {link.Target}";
}
