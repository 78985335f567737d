using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Alternation;
using CspNet.Internal.Processes;
using CspNet.Remote.Protocol;

namespace CspNet.Remote.Internal;

/// <summary>
/// A reading end whose channel lives in another program (a One2Any or Any2Any reader). A read asks
/// the home to read for it and completes with the value taken there; a cancelled read is cancelled
/// at the home, and if the home had already taken a value, the read returns it instead: nothing is
/// lost.
/// </summary>
internal sealed class RemoteChannelIn<T>(PeerLink link, uint handle, ValueCodec<T> codec, string name) : AltingChannelIn<T>
{
    public override T Read()
    {
        ProcessContext.ThrowIfBlockingInAsyncProcess("Read()", "ReadAsync()");
        return ReadAsync().AsTask().GetAwaiter().GetResult();
    }

    public override async ValueTask<T> ReadAsync(CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        PendingOp op = link.Begin();
        link.Send(new ClientFrame { Read = new Read { Handle = handle, OpId = op.Id } });
        Completion completion = await link.AwaitAsync(op, cancellationToken).ConfigureAwait(false);
        completion.ThrowIfFailed($"Reading from '{name}'", cancellationToken);
        return codec.Read(completion.Value);
    }

    public override void Poison() => link.Poison(handle);

    /// <summary>
    /// A selection over this end would need the home to set a value aside until the selection
    /// decides (the Watch/Reserve/Settle frames of link.proto); until that lands it is refused
    /// clearly rather than risking a lost value.
    /// </summary>
    protected internal override bool Prepare(GuardSite site) =>
        throw new NotSupportedException(
            $"The reading end of '{name}' belongs to a channel that lives in another program ({link.Target}); such an end cannot be a guard of an Alternative yet. " +
            "Read it in a process of its own that forwards to a local channel, and select over that channel.");

    protected internal override bool TryCommit(GuardSite site) => false;

    public override string ToString() => $"reading end of '{name}' at {link.Target}";
}
