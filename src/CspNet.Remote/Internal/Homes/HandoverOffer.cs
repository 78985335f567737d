using System;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// A home offered to one client's program (link.proto, Handover): its answer, and the bound on the
/// taker's silence, which starts again whenever the taker acknowledges values (HandoverProgress).
/// A large buffer thus moves however long sending it takes, as long as the taker keeps up; a taker
/// that stops answering is given up on within the bound of its last sign of life.
/// </summary>
internal sealed class HandoverOffer(TimeSpan bound) : IDisposable
{
    private readonly TaskCompletionSource<string?> _answer = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _silence = new();

    /// <summary>The incarnation the taker took the home under; null if it refused or its stream ended.</summary>
    internal Task<string?> Taker => _answer.Task;

    /// <summary>Cancelled once the taker has said nothing for the bound.</summary>
    internal CancellationToken Silence => _silence.Token;

    internal void Answer(string? taker) => _answer.TrySetResult(taker);

    /// <summary>The taker showed progress (or the offer was just sent): the bound starts again.</summary>
    internal void Progressed()
    {
        try
        {
            _silence.CancelAfter(bound);
        }
        catch (ObjectDisposedException)
        {
            // The offer ended meanwhile: a late acknowledgement changes nothing.
        }
    }

    public void Dispose() => _silence.Dispose();
}
