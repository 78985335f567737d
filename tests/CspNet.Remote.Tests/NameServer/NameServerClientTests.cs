using CspNet.NameServer;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// A program's NameServer client against NameServers of each registry:
/// <see cref="InMemoryNameServerClientTests"/> and <see cref="EtcdNameServerClientTests"/>.
/// A NameServer "restarted" here comes back with an empty table (on etcd, a new prefix), as one
/// whose in-memory table was lost; replicas that share a table in etcd are tested in
/// <see cref="EtcdNameRegistryTests"/>.
/// </summary>
public abstract class NameServerClientTests(EtcdFixture? etcd) : RegistryTests(etcd)
{
    private static readonly NameEntry Numbers = InMemoryNameRegistryTests.Channel("numbers");

    private static NameServerClient NewClient(Uri nameServer, int linkPort, TimeSpan? nameServerTimeout = null) =>
        new(nameServer, new LinkEndpoint("127.0.0.1", linkPort), "client-" + linkPort, new NameServerClientOptions
        {
            NameServerTimeout = nameServerTimeout ?? TimeSpan.FromSeconds(5),
            InitialBackoff = TimeSpan.FromMilliseconds(10),
            MaxBackoff = TimeSpan.FromMilliseconds(100),
        });

    internal static async Task<NameServerClient> StartedClientAsync(Uri nameServer, int linkPort)
    {
        NameServerClient client = NewClient(nameServer, linkPort);
        try
        {
            await client.StartAsync(CancellationToken.None);
            return client;
        }
        catch
        {
            await client.DisposeAsync();
            throw;
        }
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_NameRegisteredLaterByAnotherProgram_ReturnsItsEntry()
    {
        await using NameServerHost host = await StartHostAsync();
        await using NameServerClient producer = await StartedClientAsync(host.Uri, 7001);
        await using NameServerClient consumer = await StartedClientAsync(host.Uri, 7002);

        Task<NameEntry> resolve = consumer.ResolveAsync("numbers", CancellationToken.None);
        NameEntry registered = await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        NameEntry resolved = await resolve;

        Assert.Equal(registered, resolved);
        Assert.Equal(new LinkEndpoint("127.0.0.1", 7001), resolved.Endpoint);
        Assert.Equal(producer.PublicIncarnation, resolved.Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RegisterAsync_NameTakenByAnotherProgram_ThrowsSayingWhere()
    {
        await using NameServerHost host = await StartHostAsync();
        await using NameServerClient first = await StartedClientAsync(host.Uri, 7001);
        await using NameServerClient second = await StartedClientAsync(host.Uri, 7002);
        await first.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        var e = await Assert.ThrowsAsync<NameAlreadyRegisteredException>(() => second.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None));
        NameEntry existing = await second.RegisterAsync(Numbers, returnExisting: true, CancellationToken.None);

        Assert.Contains("127.0.0.1:7001", e.Message, StringComparison.Ordinal);
        Assert.Contains("client-7001", e.Message, StringComparison.Ordinal);
        Assert.Equal(first.PublicIncarnation, existing.Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task UnregisterAsync_RegisteredName_RemovesIt()
    {
        await using NameServerHost host = await StartHostAsync();
        await using NameServerClient client = await StartedClientAsync(host.Uri, 7001);
        await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        await client.UnregisterAsync("numbers", CancellationToken.None);
        await client.UnregisterAsync("numbers", CancellationToken.None);

        Assert.Null(await host.Registry.ResolveAsync("numbers", TimeSpan.Zero));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task DisposeAsync_StartedClient_ClosesTheLeaseAndItsNames()
    {
        await using NameServerHost host = await StartHostAsync();
        NameServerClient client = await StartedClientAsync(host.Uri, 7001);
        await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        string lease = client.Incarnation;

        await client.DisposeAsync();

        await Assert.ThrowsAsync<LeaseNotFoundException>(() => host.Registry.RenewAsync(lease));
        Assert.Null(await host.Registry.ResolveAsync("numbers", TimeSpan.Zero));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RenewOnceAsync_AfterNameServerRestart_OpensANewLeaseAndRegistersAgain()
    {
        NameServerHost first = await StartHostAsync();
        int port = first.Port;
        await using NameServerClient producer = await StartedClientAsync(first.Uri, 7001);
        (string Old, string New)? changed = null;
        producer.IncarnationChanged += (old, @new) => changed = (old, @new);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        await producer.RegisterAsync(new NameEntry { Name = "sync", Kind = NameKind.Barrier }, returnExisting: false, CancellationToken.None);
        string before = producer.Incarnation;
        await first.DisposeAsync();

        await using NameServerHost second = await StartHostAsync(new NameServerHostOptions { Port = port });
        await producer.RenewOnceAsync(CancellationToken.None);

        await using NameServerClient consumer = NewClient(second.Uri, 7002);
        NameEntry resolved = await consumer.ResolveAsync("numbers", CancellationToken.None);
        Assert.NotEqual(before, producer.Incarnation);
        Assert.Equal((before, producer.Incarnation), changed);
        Assert.Equal(producer.PublicIncarnation, resolved.Incarnation);
        Assert.NotNull(await second.Registry.ResolveAsync("sync", TimeSpan.Zero));
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RenewLoop_NameServerRestarted_RegistersAgainWhenItsTimerFires()
    {
        var time = new ManualTimeProvider();
        NameServerHost first = await StartHostAsync();
        int port = first.Port;
        await using var producer = new NameServerClient(first.Uri, new LinkEndpoint("127.0.0.1", 7001), "producer", new NameServerClientOptions { TimeProvider = time });
        var changed = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        producer.IncarnationChanged += (_, @new) => changed.TrySetResult(@new);
        await producer.StartAsync(CancellationToken.None);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        await first.DisposeAsync();
        await using NameServerHost second = await StartHostAsync(new NameServerHostOptions { Port = port });

        // The lease's time to live is 10 s: the loop renews every third of it.
        time.Advance(TimeSpan.FromSeconds(10) / 3);
        string incarnation = await changed.Task;

        NameEntry? resolved = await second.Registry.ResolveAsync("numbers", TimeSpan.Zero);
        Assert.Equal(Incarnations.Of(incarnation), resolved!.Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RegisterAsync_LeaseExpiredMeanwhile_OpensANewLeaseAndRegisters()
    {
        await using NameServerHost host = await StartHostAsync();
        await using NameServerClient client = await StartedClientAsync(host.Uri, 7001);
        string before = client.Incarnation;
        await host.Registry.CloseLeaseAsync(before);

        NameEntry registered = await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.NotEqual(before, client.Incarnation);
        Assert.Equal(client.PublicIncarnation, registered.Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RenewOnceAsync_NameServerStoppedWithAReplicaUp_RegistersItsNamesAtTheReplica()
    {
        NameServerHost first = await StartHostAsync();
        await using NameServerHost replica = await StartHostAsync();
        await using var producer = new NameServerClient(first.Uri, new LinkEndpoint("127.0.0.1", 7001), "producer", new NameServerClientOptions
        {
            Replicas = [replica.Uri],
            InitialBackoff = TimeSpan.FromMilliseconds(10),
        });
        await producer.StartAsync(CancellationToken.None);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        await first.DisposeAsync();

        // The replica does not share the first one's table: it answers NOT_FOUND to the lease,
        // and the client registers its names there again.
        await producer.RenewOnceAsync(CancellationToken.None);

        Assert.Equal(replica.Uri, producer.NameServer);
        NameEntry? resolved = await replica.Registry.ResolveAsync("numbers", TimeSpan.Zero);
        Assert.Equal(producer.PublicIncarnation, resolved?.Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RegisterAsync_NameServerKilledBetweenNewLeaseAndRegistration_OpensALeaseAtTheReplicaAndRegistersThere()
    {
        await using NameServerHost first = await StartHostAsync();
        await using NameServerHost replica = await StartHostAsync();
        int leases = 0;
        await using var producer = new NameServerClient(first.Uri, new LinkEndpoint("127.0.0.1", 7001), "producer", new NameServerClientOptions
        {
            Replicas = [replica.Uri],
            InitialBackoff = TimeSpan.FromMilliseconds(10),

            // The second lease (the one after the loss below) is the last the first NameServer opens:
            // it dies before anything is registered under it.
            LeaseOpened = async _ =>
            {
                if (Interlocked.Increment(ref leases) == 2)
                {
                    await first.DisposeAsync();
                }
            },
        });
        await producer.StartAsync(CancellationToken.None);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        await first.Registry.CloseLeaseAsync(producer.Incarnation);

        // NOT_FOUND at the first NameServer: a new lease there, then registering "numbers" again
        // fails over to the replica, which has never heard of that lease.
        NameEntry more = await producer.RegisterAsync(InMemoryNameRegistryTests.Channel("more"), returnExisting: false, CancellationToken.None);

        Assert.Equal(3, leases);
        Assert.Equal(replica.Uri, producer.NameServer);
        Assert.Equal(producer.PublicIncarnation, more.Incarnation);
        Assert.Equal(producer.PublicIncarnation, (await replica.Registry.ResolveAsync("numbers", TimeSpan.Zero))?.Incarnation);
        Assert.Equal(producer.PublicIncarnation, (await replica.Registry.ResolveAsync("more", TimeSpan.Zero))?.Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RegisterAsync_EveryNewLeaseUnknownAtTheNextCall_GivesUpSayingToShareAnEtcd()
    {
        await using NameServerHost host = await StartHostAsync();
        NameServerClient? client = null;
        int leases = 0;

        // Each lease opened after the first is gone before the next call, as when calls go back
        // and forth between NameServers that keep tables of their own.
        client = new NameServerClient(host.Uri, new LinkEndpoint("127.0.0.1", 7001), "flapping", new NameServerClientOptions
        {
            InitialBackoff = TimeSpan.FromMilliseconds(10),
            LeaseOpened = async ct =>
            {
                if (Interlocked.Increment(ref leases) > 1)
                {
                    await host.Registry.CloseLeaseAsync(client!.Incarnation, ct);
                }
            },
        });
        await using (client)
        {
            await client.StartAsync(CancellationToken.None);
            await host.Registry.CloseLeaseAsync(client.Incarnation);

            var e = await Assert.ThrowsAsync<LeaseNotFoundException>(() => client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None));

            Assert.Contains("'flapping'", e.Message, StringComparison.Ordinal);
            Assert.Contains("shared etcd", e.Message, StringComparison.Ordinal);
            Assert.InRange(leases, 2, 10);
            Assert.Null(await host.Registry.ResolveAsync("numbers", TimeSpan.Zero));
        }
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_FirstAddressDown_AnswersFromTheReplicaWithoutWaitingForTheTimeout()
    {
        NameServerHost gone = await StartHostAsync();
        Uri down = gone.Uri;
        await gone.DisposeAsync();
        await using NameServerHost replica = await StartHostAsync();
        await using NameServerClient producer = await StartedClientAsync(replica.Uri, 7001);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        // A minute of NameServer timeout: only moving on to the replica can answer within the test's timeout.
        await using var consumer = new NameServerClient(down, new LinkEndpoint("127.0.0.1", 7002), "consumer", new NameServerClientOptions
        {
            Replicas = [replica.Uri],
            NameServerTimeout = TimeSpan.FromMinutes(1),
            InitialBackoff = TimeSpan.FromSeconds(30),
            MaxBackoff = TimeSpan.FromSeconds(30),
        });
        NameEntry resolved = await consumer.ResolveAsync("numbers", CancellationToken.None);

        Assert.Equal(producer.PublicIncarnation, resolved.Incarnation);
        Assert.Equal(replica.Uri, consumer.NameServer);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task StartAsync_EveryReplicaDown_ThrowsNamingEveryAddress()
    {
        NameServerHost a = await StartHostAsync();
        NameServerHost b = await StartHostAsync();
        (Uri first, Uri second) = (a.Uri, b.Uri);
        await a.DisposeAsync();
        await b.DisposeAsync();
        await using var client = new NameServerClient(first, new LinkEndpoint("127.0.0.1", 7001), "lonely", new NameServerClientOptions
        {
            Replicas = [second],
            NameServerTimeout = TimeSpan.FromMilliseconds(500),
            InitialBackoff = TimeSpan.FromMilliseconds(10),
            MaxBackoff = TimeSpan.FromMilliseconds(50),
        });

        var e = await Assert.ThrowsAsync<NameServerUnavailableException>(() => client.StartAsync(CancellationToken.None));

        Assert.Contains(first.ToString(), e.Message, StringComparison.Ordinal);
        Assert.Contains(second.ToString(), e.Message, StringComparison.Ordinal);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_NameServerStartsWhileResolving_RetriesAndReturns()
    {
        NameServerHost gone = await StartHostAsync();
        int port = gone.Port;
        Uri address = gone.Uri;
        await gone.DisposeAsync();
        await using NameServerClient consumer = NewClient(address, 7002);

        Task<NameEntry> resolve = consumer.ResolveAsync("numbers", CancellationToken.None);
        await using NameServerHost host = await StartHostAsync(new NameServerHostOptions { Port = port });
        await using NameServerClient producer = await StartedClientAsync(host.Uri, 7001);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.Equal(producer.PublicIncarnation, (await resolve).Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_ServerWaitsFarLessThanAsked_KeepsAskingUntilRegistered()
    {
        var options = new NameServerHostOptions();
        options.NameServer.MaxResolveWait = TimeSpan.Zero;
        await using NameServerHost host = await StartHostAsync(options);
        await using NameServerClient consumer = NewClient(host.Uri, 7002);
        await using NameServerClient producer = await StartedClientAsync(host.Uri, 7001);

        Task<NameEntry> resolve = consumer.ResolveAsync("numbers", CancellationToken.None);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.Equal(producer.PublicIncarnation, (await resolve).Incarnation);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task StartAsync_NameServerDown_ThrowsNamingTheAddressAfterTheTimeout()
    {
        NameServerHost gone = await StartHostAsync();
        Uri address = gone.Uri;
        await gone.DisposeAsync();
        await using NameServerClient client = NewClient(address, 7001, nameServerTimeout: TimeSpan.FromMilliseconds(300));

        var e = await Assert.ThrowsAsync<NameServerUnavailableException>(() => client.StartAsync(CancellationToken.None));
        var resolve = await Assert.ThrowsAsync<NameServerUnavailableException>(() => client.ResolveAsync("numbers", CancellationToken.None));

        Assert.Contains(address.ToString(), e.Message, StringComparison.Ordinal);
        Assert.Contains(address.ToString(), resolve.Message, StringComparison.Ordinal);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task ResolveAsync_Cancelled_ThrowsOperationCanceled()
    {
        await using NameServerHost host = await StartHostAsync();
        await using NameServerClient client = NewClient(host.Uri, 7001);
        using var cts = new CancellationTokenSource();

        Task<NameEntry> resolve = client.ResolveAsync("never", cts.Token);
        await cts.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => resolve);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task DisposeAsync_WhileResolving_EndsTheResolveWithObjectDisposed()
    {
        await using NameServerHost host = await StartHostAsync();
        NameServerClient client = NewClient(host.Uri, 7001);
        Task<NameEntry> resolve = client.ResolveAsync("never", CancellationToken.None);

        await client.DisposeAsync();

        await Assert.ThrowsAsync<ObjectDisposedException>(() => resolve);
    }

    [RegistryFact(Timeout = 30000)]
    public async Task StartAsync_ConnectionTornDownUnderTheCall_RetriesAndOpensTheLease()
    {
        await using NameServerHost host = await StartHostAsync();
        using var handler = new TornDownOnceHandler(new SocketsHttpHandler());
        await using var client = new NameServerClient(host.Uri, new LinkEndpoint("127.0.0.1", 7001), "client-7001", new NameServerClientOptions
        {
            HttpHandler = handler,
            InitialBackoff = TimeSpan.FromMilliseconds(10),
        });

        // As when a keep-alive ping went unanswered on a loaded machine and the handler disposed
        // the connection under the call: the program must not fail to start for it.
        await client.StartAsync(CancellationToken.None);
        await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.Equal(1, handler.TornDown);
        Assert.NotNull(await host.Registry.ResolveAsync("numbers", TimeSpan.Zero));
    }

    /// <summary>Fails its first request as a connection disposed under the call does, then passes requests on.</summary>
    private sealed class TornDownOnceHandler(HttpMessageHandler inner) : DelegatingHandler(inner)
    {
        internal int TornDown { get; private set; }

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            if (TornDown == 0)
            {
                TornDown++;
                throw new ObjectDisposedException("System.Net.Http.HttpConnectionResponseContent");
            }

            return base.SendAsync(request, cancellationToken);
        }
    }

    [RegistryFact(Timeout = 30000)]
    public async Task RegisterAsync_LeaseLostWithManyNames_RegistersThemAgainSeveralAtOnceButNotAllAtOnce()
    {
        const int Names = 20;
        await using NameServerHost host = await StartHostAsync();
        using var handler = new RegistrationsAtOnceHandler(new SocketsHttpHandler());
        await using var client = new NameServerClient(host.Uri, new LinkEndpoint("127.0.0.1", 7001), "client-7001", new NameServerClientOptions
        {
            HttpHandler = handler,
            InitialBackoff = TimeSpan.FromMilliseconds(10),
        });
        await client.StartAsync(CancellationToken.None);
        for (int i = 0; i < Names; i++)
        {
            await client.RegisterAsync(InMemoryNameRegistryTests.Channel("name" + i), returnExisting: false, CancellationToken.None);
        }

        await host.Registry.CloseLeaseAsync(client.Incarnation);

        // After the next OpenLease, registrations are held until four are in flight together: one
        // name after another they never are (then the handler gives up after 2 s and lets them go).
        // Released, the others follow at once: only the client's bound (8) keeps all 20 from
        // being in flight together.
        handler.HoldAfterNextLease(4);
        await client.RegisterAsync(InMemoryNameRegistryTests.Channel("one-more"), returnExisting: false, CancellationToken.None);

        Assert.InRange(handler.MostAtOnce, 4, 8);
        for (int i = 0; i < Names; i++)
        {
            Assert.Equal(client.PublicIncarnation, (await host.Registry.ResolveAsync("name" + i, TimeSpan.Zero))?.Incarnation);
        }
    }

    [RegistryFact(Timeout = 30000)]
    public async Task StartAsync_FirstConnectionTimesOut_TriesAgainAndOpensTheLease()
    {
        await using NameServerHost host = await StartHostAsync();

        // The first connection never gets through (as to a NameServer too loaded to accept in
        // time): the handler gives up after its ConnectTimeout and the call fails as CANCELLED,
        // though nobody cancelled it. Later connections go through.
        int connects = 0;
        using var handler = new SocketsHttpHandler
        {
            ConnectTimeout = TimeSpan.FromMilliseconds(200),
            ConnectCallback = async (context, cancellationToken) =>
            {
                if (Interlocked.Increment(ref connects) == 1)
                {
                    await Task.Delay(Timeout.Infinite, cancellationToken);
                }

                var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp) { NoDelay = true };
                await socket.ConnectAsync(context.DnsEndPoint, cancellationToken);
                return new System.Net.Sockets.NetworkStream(socket, ownsSocket: true);
            },
        };
        await using var client = new NameServerClient(host.Uri, new LinkEndpoint("127.0.0.1", 7001), "client-7001", new NameServerClientOptions
        {
            HttpHandler = handler,
            InitialBackoff = TimeSpan.FromMilliseconds(10),
        });

        await client.StartAsync(CancellationToken.None);
        await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.True(Volatile.Read(ref connects) >= 2);
        Assert.Equal(client.PublicIncarnation, (await host.Registry.ResolveAsync("numbers", TimeSpan.Zero))?.Incarnation);
    }

    [RegistryFact(Timeout = 60000)]
    public async Task RenewLoop_NewLeaseRefusedOnce_GoesOnAndRegistersTheNamesAgain()
    {
        // Short leases: the client renews every third of the time to live, its own loop doing it.
        var options = new NameServerHostOptions();
        options.NameServer.LeaseTtl = TimeSpan.FromSeconds(2);
        await using NameServerHost host = await StartHostAsync(options);
        using var handler = new RefuseOpenLeaseHandler(new SocketsHttpHandler());
        await using var client = new NameServerClient(host.Uri, new LinkEndpoint("127.0.0.1", 7001), "client-7001", new NameServerClientOptions
        {
            HttpHandler = handler,
            InitialBackoff = TimeSpan.FromMilliseconds(10),
        });
        await client.StartAsync(CancellationToken.None);
        await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        // The lease goes; the renewal that finds it gone asks for a new one and is refused (a
        // NameServer at capacity), which is not an RPC failure the client retries by itself.
        handler.RefuseNextOpenLease();
        string lost = client.Incarnation;
        await host.Registry.CloseLeaseAsync(lost);
        await handler.Refused.WaitAsync(TimeSpan.FromSeconds(20));

        // The loop must go on: the next renewal opens a lease and registers the name again.
        NameEntry? again = await host.Registry.ResolveAsync("numbers", TimeSpan.FromSeconds(20));
        Assert.NotNull(again);
        Assert.Equal(client.PublicIncarnation, again.Incarnation);
        Assert.NotEqual(lost, client.Incarnation);
    }

    /// <summary>Once armed, answers the next OpenLease with RESOURCE_EXHAUSTED (as a NameServer at its lease limit does) without passing it on.</summary>
    private sealed class RefuseOpenLeaseHandler(HttpMessageHandler inner) : DelegatingHandler(inner)
    {
        private readonly TaskCompletionSource _refused = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _armed;

        internal Task Refused => _refused.Task;

        internal void RefuseNextOpenLease() => Volatile.Write(ref _armed, 1);

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            if (!request.RequestUri!.AbsolutePath.EndsWith("/OpenLease", StringComparison.Ordinal) || Interlocked.Exchange(ref _armed, 0) == 0)
            {
                return base.SendAsync(request, cancellationToken);
            }

            // A trailers-only gRPC answer: the status in the response headers, no message.
            var response = new HttpResponseMessage(System.Net.HttpStatusCode.OK)
            {
                Version = System.Net.HttpVersion.Version20,
                RequestMessage = request,
                Content = new ByteArrayContent([]),
            };
            response.Content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/grpc");
            response.Headers.Add("grpc-status", ((int)Grpc.Core.StatusCode.ResourceExhausted).ToString(System.Globalization.CultureInfo.InvariantCulture));
            response.Headers.Add("grpc-message", "too many leases");
            _refused.TrySetResult();
            return Task.FromResult(response);
        }
    }

    /// <summary>Once armed and a lease opened, holds Register calls until <c>count</c> are in flight at once (or 2 s passed).</summary>
    private sealed class RegistrationsAtOnceHandler(HttpMessageHandler inner) : DelegatingHandler(inner)
    {
        private readonly TaskCompletionSource _together = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _wanted = int.MaxValue;
        private int _armed;
        private int _holding;
        private int _inFlight;
        private int _mostAtOnce;

        internal int MostAtOnce => Volatile.Read(ref _mostAtOnce);

        internal void HoldAfterNextLease(int count)
        {
            _wanted = count;
            Volatile.Write(ref _armed, 1);
        }

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            string path = request.RequestUri!.AbsolutePath;
            if (path.EndsWith("/OpenLease", StringComparison.Ordinal) && Volatile.Read(ref _armed) == 1)
            {
                Volatile.Write(ref _holding, 1);
            }

            if (!path.EndsWith("/Register", StringComparison.Ordinal) || Volatile.Read(ref _holding) == 0)
            {
                return await base.SendAsync(request, cancellationToken);
            }

            int now = Interlocked.Increment(ref _inFlight);
            InterlockedMax(ref _mostAtOnce, now);
            try
            {
                if (now >= _wanted)
                {
                    _together.TrySetResult();
                }

                if (await Task.WhenAny(_together.Task, Task.Delay(TimeSpan.FromSeconds(2), cancellationToken)) != _together.Task)
                {
                    // Not together in time: let this and every later call go, so the test ends.
                    _together.TrySetResult();
                }

                return await base.SendAsync(request, cancellationToken);
            }
            finally
            {
                Interlocked.Decrement(ref _inFlight);
            }
        }

        private static void InterlockedMax(ref int field, int value)
        {
            int seen = Volatile.Read(ref field);
            while (value > seen && Interlocked.CompareExchange(ref field, value, seen) is int actual && actual != seen)
            {
                seen = actual;
            }
        }
    }

    [RegistryFact]
    public void Constructor_InvalidArguments_Throw()
    {
        var link = new LinkEndpoint("127.0.0.1", 7001);
        Assert.Throws<ArgumentException>(() => new NameServerClient(new Uri("ftp://localhost:1"), link, "p"));
        Assert.ThrowsAny<ArgumentException>(() => new NameServerClient(new Uri("http://localhost:1"), link with { Port = 0 }, "p"));
        Assert.ThrowsAny<ArgumentException>(() => new NameServerClient(new Uri("http://localhost:1"), link, "bad\nlabel"));
    }
}

/// <summary>The client against NameServers that keep their table in memory (the default).</summary>
public sealed class InMemoryNameServerClientTests() : NameServerClientTests(null);

/// <summary>The client against NameServers that keep their table in one etcd for the class.</summary>
[RequiresEtcd]
public sealed class EtcdNameServerClientTests(EtcdFixture etcd) : NameServerClientTests(etcd), IClassFixture<EtcdFixture>;
