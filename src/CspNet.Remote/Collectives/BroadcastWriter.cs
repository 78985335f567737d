using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Collectives;

/// <summary>
/// The one writer of a named broadcast (<see cref="NamedBroadcast.CreateAsync{T}"/>): each value
/// written goes to every enrolled reader, in order, exactly once.
/// </summary>
/// <typeparam name="T">The type of the values.</typeparam>
/// <remarks>
/// <para>
/// A write goes to the readers enrolled when it starts, all at once, and completes when every one
/// of them has taken the value (or its buffer holds it). With no reader enrolled it completes at
/// once: wait for the readers first with <see cref="WaitForReadersAsync"/>.
/// </para>
/// <para>
/// <b>Cancellation is all or nothing</b>: a cancelled write throws
/// <see cref="OperationCanceledException"/> only if no reader took the value; once one has, the
/// write goes on until every enrolled reader has it, and completes.
/// </para>
/// <para>
/// <b>A reader resigning</b> during a write is not waited for. <b>A reader's program that is lost</b>
/// is resigned: the write still reaches every other reader, then throws
/// <see cref="PeerLostException"/> naming the broadcast and the lost program; catch it to go on
/// writing to the others. <b>Poison</b> from a reader (or a reader's program that left without
/// resigning) poisons the broadcast: the write throws <see cref="PoisonException"/>, every reader
/// is poisoned and later writes and enrolments fail. <see cref="Poison"/> and
/// <see cref="DisposeAsync"/> end the broadcast the same way; readers get
/// <see cref="PoisonException"/> after the values written before.
/// </para>
/// <para>Thread-safe, but a broadcast has one writer: two writes at once throw <see cref="InvalidOperationException"/>.</para>
/// </remarks>
public sealed class BroadcastWriter<T> : IChannelOut<T>, IAsyncDisposable
{
    internal const string Enrol = "+";
    internal const string Resign = "-";

    private readonly CspNode _node;
    private readonly AltingChannelIn<string> _control;
    private readonly Lock _gate = new();
    private readonly List<Member> _members = [];
    private readonly Dictionary<string, Member> _byChannel = new(StringComparer.Ordinal);
    private readonly List<(int Count, TaskCompletionSource Done)> _waiters = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _controlLoop;
    private string? _poisonedBy;
    private int _writing;
    private int _disposed;

    internal BroadcastWriter(CspNode node, string name, AltingChannelIn<string> control)
    {
        _node = node;
        Name = name;
        _control = control;
        _controlLoop = Task.Run(ServeEnrolmentsAsync);
    }

    /// <summary>The broadcast's name.</summary>
    public string Name { get; }

    /// <summary>How many readers are enrolled (attached by the writer) now.</summary>
    public int Readers
    {
        get
        {
            lock (_gate)
            {
                return _members.Count;
            }
        }
    }

    /// <summary>Waits until at least <paramref name="count"/> readers are enrolled, so that the next write reaches each of them.</summary>
    /// <param name="count">How many readers to wait for.</param>
    /// <param name="cancellationToken">Stops waiting.</param>
    /// <returns>A task that completes when that many readers are enrolled.</returns>
    /// <exception cref="PoisonException">The broadcast was poisoned or ended.</exception>
    public Task WaitForReadersAsync(int count, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        TaskCompletionSource done;
        lock (_gate)
        {
            ThrowIfPoisoned();
            if (_members.Count >= count)
            {
                return Task.CompletedTask;
            }

            done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiters.Add((count, done));
        }

        return done.Task.WaitAsync(cancellationToken);
    }

    /// <summary>Writes <paramref name="value"/> to every enrolled reader; see the class remarks.</summary>
    /// <param name="value">The value.</param>
    /// <exception cref="PoisonException">The broadcast was poisoned, by this writer or a reader.</exception>
    /// <exception cref="PeerLostException">A reader's program was lost; every other reader took the value.</exception>
    public void Write(T value) => Blocking.Wait(WriteAsync(value, CancellationToken.None), "Write");

    /// <summary>Writes <paramref name="value"/> to every enrolled reader without holding a thread; see the class remarks.</summary>
    /// <param name="value">The value.</param>
    /// <param name="cancellationToken">Cancels the write if no reader has taken the value yet.</param>
    /// <returns>A task that completes when every enrolled reader has the value.</returns>
    /// <exception cref="PoisonException">The broadcast was poisoned, by this writer or a reader.</exception>
    /// <exception cref="PeerLostException">A reader's program was lost; every other reader took the value, and the lost one is resigned.</exception>
    /// <exception cref="OperationCanceledException">Cancelled before any reader took the value: no reader has it.</exception>
    public async ValueTask WriteAsync(T value, CancellationToken cancellationToken = default)
    {
        if (Interlocked.Exchange(ref _writing, 1) != 0)
        {
            throw new InvalidOperationException($"Two processes wrote to the broadcast '{Name}' at once; a broadcast has one writer: write from one process at a time.");
        }

        try
        {
            Member[] members;
            lock (_gate)
            {
                ThrowIfPoisoned();
                members = [.. _members];
            }

            Outcome[] outcomes = await Task.WhenAll(members.Select(m => WriteToAsync(m, value, cancellationToken))).ConfigureAwait(false);
            Member[] cancelled = [.. members.Where((_, i) => outcomes[i] == Outcome.Cancelled)];
            if (cancelled.Length > 0 && Array.IndexOf(outcomes, Outcome.Took) >= 0)
            {
                // A reader has the value, so the write has happened: the others must get it too.
                Outcome[] again = await Task.WhenAll(cancelled.Select(m => WriteToAsync(m, value, CancellationToken.None))).ConfigureAwait(false);
                foreach ((Member member, Outcome outcome) in cancelled.Zip(again))
                {
                    outcomes[Array.IndexOf(members, member)] = outcome;
                }
            }

            ThrowIfFailed(members, outcomes, cancellationToken);
        }
        finally
        {
            Volatile.Write(ref _writing, 0);
        }
    }

    /// <summary>Ends the broadcast: every reader is poisoned (after the values written before), and later writes and enrolments throw <see cref="PoisonException"/>.</summary>
    public void Poison() => PoisonAll("its writer poisoned it");

    /// <summary>Ends the broadcast as <see cref="Poison"/> does, and stops taking enrolments.</summary>
    /// <returns>A task that completes when the writer has stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        PoisonAll("its writer ended it");
        await _stop.CancelAsync().ConfigureAwait(false);
        await _controlLoop.ConfigureAwait(false);
        _stop.Dispose();
    }

    private void ThrowIfFailed(Member[] members, Outcome[] outcomes, CancellationToken cancellationToken)
    {
        int poisoned = Array.IndexOf(outcomes, Outcome.Poisoned);
        if (poisoned >= 0)
        {
            Member reader = members[poisoned];
            PoisonAll($"the reader {reader.Channel} was poisoned ({reader.Error?.Message})");
            throw new PoisonException(
                $"The broadcast '{Name}' is poisoned: the reader {reader.Channel} was poisoned or its program left without resigning. "
                + "Every reader is poisoned now; end this process as on poison.",
                reader.Error!);
        }

        int lost = Array.IndexOf(outcomes, Outcome.Lost);
        if (lost >= 0 && Array.IndexOf(outcomes, Outcome.Cancelled) < 0)
        {
            Member reader = members[lost];
            throw new PeerLostException(
                $"Broadcasting on '{Name}': the reader {reader.Channel} was lost with its program and is resigned; every other enrolled reader took the value. "
                + $"Catch this to go on writing to the others. {reader.Error!.Message}",
                reader.Error);
        }

        if (Array.IndexOf(outcomes, Outcome.Cancelled) >= 0)
        {
            throw new OperationCanceledException($"The write to the broadcast '{Name}' was cancelled before any reader took the value; no reader has it.", cancellationToken);
        }
    }

    private async Task<Outcome> WriteToAsync(Member member, T value, CancellationToken cancellationToken)
    {
        var settled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            if (member.Resigned)
            {
                return Outcome.Resigned;
            }

            member.Pending = settled.Task;
        }

        using var both = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, member.Resigning.Token);
        try
        {
            await member.Out.WriteAsync(value, both.Token).ConfigureAwait(false);
            return Outcome.Took;
        }
        catch (OperationCanceledException) when (both.IsCancellationRequested)
        {
            return member.Resigning.IsCancellationRequested ? Outcome.Resigned : Outcome.Cancelled;
        }
        catch (PeerLostException e)
        {
            member.Error = e;
            Remove(member);
            return Outcome.Lost;
        }
        catch (PoisonException e) when (!member.Resigned)
        {
            member.Error = e;
            return Outcome.Poisoned;
        }
        catch (PoisonException)
        {
            return Outcome.Resigned;
        }
        finally
        {
            lock (_gate)
            {
                member.Pending = null;
            }

            settled.SetResult();
        }
    }

    // Enrolments and resignations arrive on the broadcast's Any2One at any time, also while a
    // write is waiting for a reader: a resigning reader must not be waited for.
    private async Task ServeEnrolmentsAsync()
    {
        try
        {
            while (true)
            {
                string message = await _control.ReadAsync(_stop.Token).ConfigureAwait(false);
                string channel = message[1..];
                if (message.StartsWith(Enrol, StringComparison.Ordinal))
                {
                    await AttachAsync(channel).ConfigureAwait(false);
                }
                else
                {
                    await DetachAsync(channel).ConfigureAwait(false);
                }
            }
        }
        catch (Exception e) when (e is OperationCanceledException or PoisonException)
        {
            // The broadcast ended.
        }
    }

    private async Task AttachAsync(string channel)
    {
        AltingChannelOut<T> output;
        try
        {
            output = await _node.GetOne2OneOutAsync<T>(channel, cancellationToken: _stop.Token).ConfigureAwait(false);
        }
        catch (PoisonException)
        {
            // The reader's program was lost between enrolling and being attached: nobody to write to.
            return;
        }
        catch (InvalidOperationException)
        {
            // A reader of another type that skipped the check at enrolment: it is not a member, and
            // the other readers go on.
            return;
        }

        var member = new Member(channel, output);
        bool poisoned;
        lock (_gate)
        {
            poisoned = _poisonedBy is not null;
            if (!poisoned)
            {
                _members.Add(member);
                _byChannel[channel] = member;
                for (int i = _waiters.Count - 1; i >= 0; i--)
                {
                    if (_members.Count >= _waiters[i].Count)
                    {
                        _waiters[i].Done.TrySetResult();
                        _waiters.RemoveAt(i);
                    }
                }
            }
        }

        if (poisoned)
        {
            output.Poison();
        }
    }

    private async Task DetachAsync(string channel)
    {
        Member? member;
        Task? pending;
        lock (_gate)
        {
            if (!_byChannel.Remove(channel, out member))
            {
                return;
            }

            member.Resigned = true;
            _members.Remove(member);
            pending = member.Pending;
        }

        // Cancelling a write is exact: the reader took the value or it did not. Then the poison
        // tells the resigning reader that nothing more will come.
        await member.Resigning.CancelAsync().ConfigureAwait(false);
        if (pending is not null)
        {
            await pending.ConfigureAwait(false);
        }

        member.Resigning.Dispose();
        member.Out.Poison();
    }

    private void Remove(Member member)
    {
        lock (_gate)
        {
            member.Resigned = true;
            _members.Remove(member);
            _byChannel.Remove(member.Channel);
        }
    }

    private void PoisonAll(string why)
    {
        Member[] members;
        List<(int Count, TaskCompletionSource Done)> waiters;
        lock (_gate)
        {
            if (_poisonedBy is not null)
            {
                return;
            }

            _poisonedBy = why;
            members = [.. _members];
            waiters = [.. _waiters];
            _waiters.Clear();
        }

        _control.Poison();
        foreach (Member member in members)
        {
            member.Out.Poison();
        }

        foreach ((_, TaskCompletionSource done) in waiters)
        {
            done.TrySetException(new PoisonException($"The broadcast '{Name}' ended: {why}."));
        }
    }

    private void ThrowIfPoisoned()
    {
        if (_poisonedBy is { } why)
        {
            throw new PoisonException($"The broadcast '{Name}' is poisoned: {why}. End this process as on poison.");
        }
    }

    private enum Outcome
    {
        Took,
        Cancelled,
        Resigned,
        Lost,
        Poisoned,
    }

    private sealed class Member(string channel, IChannelOut<T> output)
    {
        public string Channel { get; } = channel;

        public IChannelOut<T> Out { get; } = output;

        /// <summary>Cancelled when the reader resigns: its pending write is withdrawn.</summary>
        public CancellationTokenSource Resigning { get; } = new();

        public bool Resigned { get; set; }

        public Task? Pending { get; set; }

        public Exception? Error { get; set; }
    }
}
