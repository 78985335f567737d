using System.Net;
using System.Net.Sockets;
using CspNet.Remote.Workers;
using Grpc.Net.Client;
using NameProto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.Workers;

/// <summary>DistParallel asks pools at once, under one budget, and only so many: pools that never answer cost a run that budget once.</summary>
public sealed class DistParallelBudgetTests
{
    private const int Timeout = 60_000;

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_TwentyTarpitPoolsAndOneRealPool_RunsOnTheRealPoolWithinTheBudget()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        WorkerPoolHost real = await system.PoolAsync("real", 2);
        await using Tarpits tarpits = await Tarpits.RegisterAsync(system.Host.Uri, 20);
        CspNode client = await system.NodeAsync("client");
        WhereAmI[] processes = [new(), new()];
        var run = new DistParallel(processes, client) { Shipper = new FakeShipping(), ReserveBudget = TimeSpan.FromSeconds(10) };

        // The tarpits advertise the most free workers, so the NameServer lists them first.
        await run.RunAsync();

        Assert.Equal(2, run.RanRemotely);
        Assert.All(processes, p => Assert.Equal(real.Node.ProgramLabel, WhereAmI.Seen[p.Id]));
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_OnlyTarpitPools_RunsLocallyOnceTheBudgetIsSpent()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using Tarpits tarpits = await Tarpits.RegisterAsync(system.Host.Uri, 20);
        CspNode client = await system.NodeAsync("client");
        WhereAmI[] processes = [new(), new()];
        var run = new DistParallel(processes, client) { Shipper = new FakeShipping(), ReserveBudget = TimeSpan.FromSeconds(2) };

        await run.RunAsync();

        Assert.Equal(2, run.RanLocally);
        Assert.All(processes, p => Assert.Equal("client", WhereAmI.Seen[p.Id]));
    }

    [Fact(Timeout = Timeout)]
    public async Task RunAsync_MorePoolsThanMaxPoolsTried_DialsOnlyThatMany()
    {
        await using PoolSystem system = await PoolSystem.StartAsync();
        await using Tarpits tarpits = await Tarpits.RegisterAsync(system.Host.Uri, 20);
        CspNode client = await system.NodeAsync("client");
        var run = new DistParallel([new WhereAmI()], client) { Shipper = new FakeShipping(), ReserveBudget = TimeSpan.FromSeconds(2), MaxPoolsTried = 5 };

        await run.RunAsync();

        Assert.Equal(1, run.RanLocally);
        Assert.InRange(tarpits.PoolsDialed, 0, 5);
    }

    [Fact]
    public void ReserveBudgetAndMaxPoolsTried_OutOfRange_Refused()
    {
        var run = new DistParallel(new WhereAmI());

        Assert.Throws<ArgumentOutOfRangeException>(() => run.ReserveBudget = TimeSpan.Zero);
        Assert.Throws<ArgumentOutOfRangeException>(() => run.MaxPoolsTried = 0);
    }

    /// <summary>
    /// Pools registered at the NameServer (with many free workers, under leases kept alive) whose
    /// endpoints accept connections and never answer: each on a port of its own.
    /// </summary>
    private sealed class Tarpits : IAsyncDisposable
    {
        private readonly List<TcpListener> _listeners = [];
        private readonly List<Socket> _accepted = [];
        private readonly List<Task> _loops = [];
        private readonly HashSet<int> _dialed = [];
        private readonly CancellationTokenSource _stop = new();
        private GrpcChannel? _nameServer;

        /// <summary>How many of the tarpits were connected to.</summary>
        internal int PoolsDialed
        {
            get
            {
                lock (_accepted)
                {
                    return _dialed.Count;
                }
            }
        }

        internal static async Task<Tarpits> RegisterAsync(Uri nameServer, int count)
        {
            var tarpits = new Tarpits { _nameServer = UserKey.Channel(nameServer) };
            var client = new NameProto.NameServer.NameServerClient(tarpits._nameServer);
            var leases = new List<string>();
            for (int i = 0; i < count; i++)
            {
                var listener = new TcpListener(IPAddress.Loopback, 0);
                listener.Start();
                tarpits._listeners.Add(listener);
                tarpits._loops.Add(tarpits.AcceptAsync(listener, i));
                int port = ((IPEndPoint)listener.LocalEndpoint).Port;
                var endpoint = new NameProto.Endpoint { Host = "127.0.0.1", Port = port };
                NameProto.OpenLeaseReply lease = await client.OpenLeaseAsync(new NameProto.OpenLeaseRequest { Endpoint = endpoint, Program = "tarpit " + i });
                leases.Add(lease.LeaseId);
                await client.RegisterPoolAsync(new NameProto.RegisterPoolRequest
                {
                    LeaseId = lease.LeaseId,
                    Pool = new NameProto.PoolEntry { Name = "tarpit" + i, Endpoint = endpoint, Workers = 1000, FreeWorkers = 1000 },
                });
            }

            tarpits._loops.Add(tarpits.RenewAsync(client, leases));
            return tarpits;
        }

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            foreach (TcpListener listener in _listeners)
            {
                listener.Stop();
            }

            await Task.WhenAll(_loops).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            lock (_accepted)
            {
                foreach (Socket socket in _accepted)
                {
                    socket.Dispose();
                }
            }

            _nameServer?.Dispose();
            _stop.Dispose();
        }

        // Holds every connection open and reads nothing from it.
        private async Task AcceptAsync(TcpListener listener, int index)
        {
            while (true)
            {
                Socket socket = await listener.AcceptSocketAsync(_stop.Token);
                lock (_accepted)
                {
                    _accepted.Add(socket);
                    _dialed.Add(index);
                }
            }
        }

        // The NameServer of PoolSystem keeps a lease 1.5 s: renewed well within that.
        private async Task RenewAsync(NameProto.NameServer.NameServerClient client, List<string> leases)
        {
            using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(300));
            while (await timer.WaitForNextTickAsync(_stop.Token))
            {
                foreach (string lease in leases)
                {
                    await client.RenewAsync(new NameProto.RenewRequest { LeaseId = lease }, cancellationToken: _stop.Token);
                }
            }
        }
    }
}
