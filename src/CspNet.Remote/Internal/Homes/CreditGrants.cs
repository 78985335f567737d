using System;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Internal;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// The credits a home grants one remote writing end of a buffered channel (link.proto, Credit):
/// slots of the channel's buffer reserved for that end's values, so that its writes stream instead
/// of waiting for an answer each.
/// </summary>
/// <remarks>
/// <para>
/// Granting starts once the end has written (an end that never writes reserves nothing) and keeps
/// up to <see cref="Window"/> credits outstanding (granted, and the value not arrived yet), topped
/// up in batches as values arrive and as readers make room; while the buffer is full, one watch
/// waits for room (<see cref="IHostedChannel{T}.WhenReservableAsync"/>): no polling.
/// </para>
/// <para>
/// The outstanding credits are the end's reservations at the channel: <see cref="Close"/> releases
/// them when the end detaches or its program is lost. The first poison of the channel is passed on
/// to the client (a Credit with poisoned set), so that its writes fail as plain ones would.
/// </para>
/// </remarks>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "_closing is cancelled by Close, never disposed: a watch may be registering on it then, and it holds no timer.")]
internal sealed class CreditGrants<T>
{
    /// <summary>
    /// The most credits an end has outstanding on a buffer of a capacity the user chose: room for a
    /// link's worth of 64 KB values (16 MiB, twice what a 10 Gbit/s link between hosts needed to
    /// fill), in frames of at most a quarter of it.
    /// </summary>
    internal const int MaxWindow = 256;

    /// <summary>
    /// The credits an end has outstanding on a buffer that never fills (<c>InfiniteBuffer</c>,
    /// <c>OverwriteOldestBuffer</c>): no capacity says how much the user wants on its way, and the
    /// writer holds each credited lane value's bytes until the home has placed it.
    /// </summary>
    internal const int UnsizedWindow = 64;

    private readonly IHostedChannel<T> _core;
    private readonly Action<int, string?> _send;
    private readonly int _batch;
    private readonly Lock _lock = new();
    private readonly CancellationTokenSource _closing = new();
    private int _outstanding;
    private bool _started;
    private bool _watching;
    private bool _closed;

    private CreditGrants(IHostedChannel<T> core, int window, Action<int, string?> send)
    {
        _core = core;
        _send = send;
        Window = window;

        // Topping up one credit at a time would send a frame per value; a quarter of the window at
        // a time keeps the writer supplied with far fewer.
        _batch = Math.Max(1, window / 4);
    }

    /// <summary>The credits an end may have outstanding: the buffer's capacity, at most <see cref="MaxWindow"/> (<see cref="UnsizedWindow"/> for a buffer that never fills).</summary>
    internal int Window { get; }

    /// <summary>The grants for an end of <paramref name="core"/>; null if its buffer's capacity is unknown (no credits: every write waits).</summary>
    /// <param name="core">The channel.</param>
    /// <param name="send">Sends a Credit frame: a count, or the poison's message (count 0).</param>
    internal static CreditGrants<T>? For(IHostedChannel<T> core, Action<int, string?> send)
    {
        int capacity = core.ReservableCapacity;
        return capacity > 0 ? new CreditGrants<T>(core, capacity == int.MaxValue ? UnsizedWindow : Math.Min(capacity, MaxWindow), send) : null;
    }

    /// <summary>The end has written: grant it credits from now on (once; later calls do nothing).</summary>
    internal void Start()
    {
        lock (_lock)
        {
            if (_started || _closed)
            {
                return;
            }

            _started = true;
        }

        _ = PassOnPoisonAsync();
        Grant();
    }

    /// <summary>Whether the end has credits outstanding: slots reserved for it that a value of its own may fill.</summary>
    internal bool HasOutstanding
    {
        get
        {
            lock (_lock)
            {
                return _outstanding > 0;
            }
        }
    }

    /// <summary>A credited value arrived: spends one outstanding credit; false if the end had none.</summary>
    internal bool Spend()
    {
        lock (_lock)
        {
            if (_outstanding == 0)
            {
                return false;
            }

            _outstanding--;
            return true;
        }
    }

    /// <summary>Tops the end's credits up to the window, as far as the buffer has room; watches for room if it has too little.</summary>
    internal void Grant()
    {
        lock (_lock)
        {
            if (!_started || _closed || _watching)
            {
                return;
            }

            int wanted = Window - _outstanding;
            if (wanted < _batch)
            {
                return;
            }

            int granted = _core.TryReserve(wanted);
            if (granted > 0)
            {
                _outstanding += granted;
                _send(granted, null);
            }

            if (granted < wanted && !_core.IsPoisoned)
            {
                _watching = true;
                _ = WatchForRoomAsync();
            }
        }
    }

    /// <summary>The end is gone (detached, or its program lost): its unused reservations go back to the channel.</summary>
    internal void Close()
    {
        int unused;
        lock (_lock)
        {
            if (_closed)
            {
                return;
            }

            _closed = true;
            unused = _outstanding;
            _outstanding = 0;
        }

        _closing.Cancel();
        _core.ReleaseReservations(unused);
    }

    private async Task WatchForRoomAsync()
    {
        try
        {
            await _core.WhenReservableAsync(_closing.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            return; // closed: nothing more to grant
        }

        lock (_lock)
        {
            _watching = false;
        }

        Grant();
    }

    private async Task PassOnPoisonAsync()
    {
        try
        {
            await _core.WhenPoisoned().WaitAsync(_closing.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            return;
        }

        _send(0, _core.CreatePoisoned().Message);
    }
}
