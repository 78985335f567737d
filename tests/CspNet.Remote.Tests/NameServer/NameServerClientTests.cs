using CspNet.NameServer;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.NameServer;

public sealed class NameServerClientTests
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

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_NameRegisteredLaterByAnotherProgram_ReturnsItsEntry()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
        await using NameServerClient producer = await StartedClientAsync(host.Uri, 7001);
        await using NameServerClient consumer = await StartedClientAsync(host.Uri, 7002);

        Task<NameEntry> resolve = consumer.ResolveAsync("numbers", CancellationToken.None);
        NameEntry registered = await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        NameEntry resolved = await resolve;

        Assert.Equal(registered, resolved);
        Assert.Equal(new LinkEndpoint("127.0.0.1", 7001), resolved.Endpoint);
        Assert.Equal(producer.PublicIncarnation, resolved.Incarnation);
    }

    [Fact(Timeout = 30000)]
    public async Task RegisterAsync_NameTakenByAnotherProgram_ThrowsSayingWhere()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
        await using NameServerClient first = await StartedClientAsync(host.Uri, 7001);
        await using NameServerClient second = await StartedClientAsync(host.Uri, 7002);
        await first.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        var e = await Assert.ThrowsAsync<NameAlreadyRegisteredException>(() => second.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None));
        NameEntry existing = await second.RegisterAsync(Numbers, returnExisting: true, CancellationToken.None);

        Assert.Contains("127.0.0.1:7001", e.Message, StringComparison.Ordinal);
        Assert.Contains("client-7001", e.Message, StringComparison.Ordinal);
        Assert.Equal(first.PublicIncarnation, existing.Incarnation);
    }

    [Fact(Timeout = 30000)]
    public async Task UnregisterAsync_RegisteredName_RemovesIt()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
        await using NameServerClient client = await StartedClientAsync(host.Uri, 7001);
        await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        await client.UnregisterAsync("numbers", CancellationToken.None);
        await client.UnregisterAsync("numbers", CancellationToken.None);

        Assert.Null(await host.Registry.ResolveAsync("numbers", TimeSpan.Zero));
    }

    [Fact(Timeout = 30000)]
    public async Task DisposeAsync_StartedClient_ClosesTheLeaseAndItsNames()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
        NameServerClient client = await StartedClientAsync(host.Uri, 7001);
        await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        await client.DisposeAsync();

        Assert.Equal(0, ((InMemoryNameRegistry)host.Registry).LeaseCount);
        Assert.Null(await host.Registry.ResolveAsync("numbers", TimeSpan.Zero));
    }

    [Fact(Timeout = 30000)]
    public async Task RenewOnceAsync_AfterNameServerRestart_OpensANewLeaseAndRegistersAgain()
    {
        NameServerHost first = await NameServerHost.StartAsync();
        int port = first.Port;
        await using NameServerClient producer = await StartedClientAsync(first.Uri, 7001);
        (string Old, string New)? changed = null;
        producer.IncarnationChanged += (old, @new) => changed = (old, @new);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        await producer.RegisterAsync(new NameEntry { Name = "sync", Kind = NameKind.Barrier }, returnExisting: false, CancellationToken.None);
        string before = producer.Incarnation;
        await first.DisposeAsync();

        await using NameServerHost second = await NameServerHost.StartAsync(new NameServerHostOptions { Port = port });
        await producer.RenewOnceAsync(CancellationToken.None);

        await using NameServerClient consumer = NewClient(second.Uri, 7002);
        NameEntry resolved = await consumer.ResolveAsync("numbers", CancellationToken.None);
        Assert.NotEqual(before, producer.Incarnation);
        Assert.Equal((before, producer.Incarnation), changed);
        Assert.Equal(producer.PublicIncarnation, resolved.Incarnation);
        Assert.NotNull(await second.Registry.ResolveAsync("sync", TimeSpan.Zero));
    }

    [Fact(Timeout = 30000)]
    public async Task RenewLoop_NameServerRestarted_RegistersAgainWhenItsTimerFires()
    {
        var time = new ManualTimeProvider();
        NameServerHost first = await NameServerHost.StartAsync();
        int port = first.Port;
        await using var producer = new NameServerClient(first.Uri, new LinkEndpoint("127.0.0.1", 7001), "producer", new NameServerClientOptions { TimeProvider = time });
        var changed = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        producer.IncarnationChanged += (_, @new) => changed.TrySetResult(@new);
        await producer.StartAsync(CancellationToken.None);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);
        await first.DisposeAsync();
        await using NameServerHost second = await NameServerHost.StartAsync(new NameServerHostOptions { Port = port });

        // The lease's time to live is 10 s: the loop renews every third of it.
        time.Advance(TimeSpan.FromSeconds(10) / 3);
        string incarnation = await changed.Task;

        NameEntry? resolved = await second.Registry.ResolveAsync("numbers", TimeSpan.Zero);
        Assert.Equal(Incarnations.Of(incarnation), resolved!.Incarnation);
    }

    [Fact(Timeout = 30000)]
    public async Task RegisterAsync_LeaseExpiredMeanwhile_OpensANewLeaseAndRegisters()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
        await using NameServerClient client = await StartedClientAsync(host.Uri, 7001);
        string before = client.Incarnation;
        await host.Registry.CloseLeaseAsync(before);

        NameEntry registered = await client.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.NotEqual(before, client.Incarnation);
        Assert.Equal(client.PublicIncarnation, registered.Incarnation);
    }

    [Fact(Timeout = 30000)]
    public async Task RenewOnceAsync_NameServerStoppedWithAReplicaUp_RegistersItsNamesAtTheReplica()
    {
        NameServerHost first = await NameServerHost.StartAsync();
        await using NameServerHost replica = await NameServerHost.StartAsync();
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

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_FirstAddressDown_AnswersFromTheReplicaWithoutWaitingForTheTimeout()
    {
        NameServerHost gone = await NameServerHost.StartAsync();
        Uri down = gone.Uri;
        await gone.DisposeAsync();
        await using NameServerHost replica = await NameServerHost.StartAsync();
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

    [Fact(Timeout = 30000)]
    public async Task StartAsync_EveryReplicaDown_ThrowsNamingEveryAddress()
    {
        NameServerHost a = await NameServerHost.StartAsync();
        NameServerHost b = await NameServerHost.StartAsync();
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

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_NameServerStartsWhileResolving_RetriesAndReturns()
    {
        NameServerHost gone = await NameServerHost.StartAsync();
        int port = gone.Port;
        Uri address = gone.Uri;
        await gone.DisposeAsync();
        await using NameServerClient consumer = NewClient(address, 7002);

        Task<NameEntry> resolve = consumer.ResolveAsync("numbers", CancellationToken.None);
        await using NameServerHost host = await NameServerHost.StartAsync(new NameServerHostOptions { Port = port });
        await using NameServerClient producer = await StartedClientAsync(host.Uri, 7001);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.Equal(producer.PublicIncarnation, (await resolve).Incarnation);
    }

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_ServerWaitsFarLessThanAsked_KeepsAskingUntilRegistered()
    {
        var options = new NameServerHostOptions();
        options.NameServer.MaxResolveWait = TimeSpan.Zero;
        await using NameServerHost host = await NameServerHost.StartAsync(options);
        await using NameServerClient consumer = NewClient(host.Uri, 7002);
        await using NameServerClient producer = await StartedClientAsync(host.Uri, 7001);

        Task<NameEntry> resolve = consumer.ResolveAsync("numbers", CancellationToken.None);
        await producer.RegisterAsync(Numbers, returnExisting: false, CancellationToken.None);

        Assert.Equal(producer.PublicIncarnation, (await resolve).Incarnation);
    }

    [Fact(Timeout = 30000)]
    public async Task StartAsync_NameServerDown_ThrowsNamingTheAddressAfterTheTimeout()
    {
        NameServerHost gone = await NameServerHost.StartAsync();
        Uri address = gone.Uri;
        await gone.DisposeAsync();
        await using NameServerClient client = NewClient(address, 7001, nameServerTimeout: TimeSpan.FromMilliseconds(300));

        var e = await Assert.ThrowsAsync<NameServerUnavailableException>(() => client.StartAsync(CancellationToken.None));
        var resolve = await Assert.ThrowsAsync<NameServerUnavailableException>(() => client.ResolveAsync("numbers", CancellationToken.None));

        Assert.Contains(address.ToString(), e.Message, StringComparison.Ordinal);
        Assert.Contains(address.ToString(), resolve.Message, StringComparison.Ordinal);
    }

    [Fact(Timeout = 30000)]
    public async Task ResolveAsync_Cancelled_ThrowsOperationCanceled()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
        await using NameServerClient client = NewClient(host.Uri, 7001);
        using var cts = new CancellationTokenSource();

        Task<NameEntry> resolve = client.ResolveAsync("never", cts.Token);
        await cts.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => resolve);
    }

    [Fact(Timeout = 30000)]
    public async Task DisposeAsync_WhileResolving_EndsTheResolveWithObjectDisposed()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
        NameServerClient client = NewClient(host.Uri, 7001);
        Task<NameEntry> resolve = client.ResolveAsync("never", CancellationToken.None);

        await client.DisposeAsync();

        await Assert.ThrowsAsync<ObjectDisposedException>(() => resolve);
    }

    [Fact(Timeout = 30000)]
    public async Task StartAsync_ConnectionTornDownUnderTheCall_RetriesAndOpensTheLease()
    {
        await using NameServerHost host = await NameServerHost.StartAsync();
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

    [Fact]
    public void Constructor_InvalidArguments_Throw()
    {
        var link = new LinkEndpoint("127.0.0.1", 7001);
        Assert.Throws<ArgumentException>(() => new NameServerClient(new Uri("ftp://localhost:1"), link, "p"));
        Assert.ThrowsAny<ArgumentException>(() => new NameServerClient(new Uri("http://localhost:1"), link with { Port = 0 }, "p"));
        Assert.ThrowsAny<ArgumentException>(() => new NameServerClient(new Uri("http://localhost:1"), link, "bad\nlabel"));
    }
}
