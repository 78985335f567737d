using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// The errors a user meets in the distributed layer, one row each: the exception's type is the
/// documented one, and its message names the construct (or the NameServer's address) and says
/// what to do, in the user's words rather than the transport's.
/// </summary>
public sealed class UserErrorTests
{
    public static TheoryData<string> Scenarios() =>
    [
        "taken name", "taken name in this program", "wrong kind", "NameServer down",
        "peer lost on write", "peer lost on read", "peer lost on select", "peer lost on bucket", "pool token wrong",
        "peer lost on barrier", "peer lost on credited write", "home unreachable", "value too large", "value type cannot cross",
        "pool token missing", "pool certificate missing", "process refused",
    ];

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Scenarios))]
    public async Task Getter_UserMistake_ThrowsDocumentedTypeWithAReadableMessage(string scenario)
    {
        await using TestSystem system = await TestSystem.StartAsync();
        (Type type, string[] says) expected;
        Exception error;
        switch (scenario)
        {
            case "taken name":
                {
                    CspNode first = await system.NodeAsync("first");
                    CspNode second = await system.NodeAsync("second");
                    await first.GetOne2OneInAsync<int>("taken");
                    error = await Record.ExceptionAsync(async () => await second.GetOne2OneInAsync<int>("taken"));
                    expected = (typeof(NameAlreadyRegisteredException), ["One2One 'taken'", "'first'", "Choose another name"]);
                    break;
                }

            case "taken name in this program":
                {
                    CspNode node = await system.NodeAsync("only");
                    await node.GetOne2OneInAsync<int>("twice");
                    error = await Record.ExceptionAsync(async () => await node.GetOne2OneInAsync<int>("twice"));
                    expected = (typeof(NameAlreadyRegisteredException), ["A One2One named 'twice' already exists in this program", "choose another name"]);
                    break;
                }

            case "wrong kind":
                {
                    CspNode host = await system.NodeAsync("host");
                    CspNode user = await system.NodeAsync("user");
                    await host.GetAny2OneInAsync<int>("results");
                    error = await Record.ExceptionAsync(async () => await user.GetOne2OneOutAsync<int>("results"));
                    expected = (typeof(InvalidOperationException), ["'results' is an Any2One", "not a One2One", "Ask for it with the kind"]);
                    break;
                }

            case "peer lost on write":
                {
                    CspNode node = await system.NodeAsync("writer");
                    ChildNode reader = system.Child("read-until-poison", "One2One", "lost-write");
                    AltingChannelOut<int> output = await node.GetOne2OneOutAsync<int>("lost-write");
                    await output.WriteAsync(1);
                    await reader.KillAsync();
                    error = await Record.ExceptionAsync(async () => await output.WriteAsync(2));
                    expected = (typeof(PeerLostException), ["Writing to 'lost-write' failed", "Lost the program 'testnode-read-until-poison-", "end this process as on poison"]);
                    break;
                }

            case "peer lost on read":
                {
                    CspNode node = await system.NodeAsync("reader");
                    ChildNode home = system.Child("hold-out", "One2Any", "lost-read");
                    await home.ReadyAsync();
                    AltingChannelIn<int> input = await node.GetOne2AnyInAsync<int>("lost-read");
                    await home.KillAsync();
                    error = await Record.ExceptionAsync(async () => await input.ReadAsync());
                    expected = (typeof(PeerLostException), ["Reading from 'lost-read' failed", "Lost the program 'testnode-hold-out-", "end this process as on poison"]);
                    break;
                }

            case "peer lost on select":
                {
                    CspNode node = await system.NodeAsync("selector");
                    ChildNode home = system.Child("hold-out", "One2Any", "lost-select");
                    await home.ReadyAsync();
                    AltingChannelIn<int> input = await node.GetOne2AnyInAsync<int>("lost-select");
                    var alternative = new Alternative([input]);
                    await home.KillAsync();
                    error = await Record.ExceptionAsync(async () => await alternative.PriSelectAsync());
                    expected = (typeof(PeerLostException), ["'lost-select'", "Lost the program 'testnode-hold-out-", "end this process as on poison"]);
                    break;
                }

            case "peer lost on bucket":
                {
                    CspNode node = await system.NodeAsync("faller");
                    ChildNode home = system.Child("bucket-fall", "lost-bucket");
                    await home.ReadyAsync();
                    NamedBucket bucket = await node.GetBucketAsync("lost-bucket");
                    await home.KillAsync();
                    error = await Record.ExceptionAsync(async () => await bucket.FlushAsync());
                    expected = (typeof(PeerLostException), ["'lost-bucket'", "Lost the program 'testnode-bucket-fall-", "end this process as on poison"]);
                    break;
                }

            case "pool token wrong":
                {
                    await using Workers.PoolSystem pools = await Workers.PoolSystem.StartAsync();
                    await pools.PoolAsync("guarded", 1, configure: o => o.Token = "secret");
                    CspNode client = await pools.NodeAsync("caller", o => o.WorkerPoolToken = "wrong");
                    var run = new DistParallel([new Nothing()], client) { Shipper = new Workers.FakeShipping() };
                    error = await Record.ExceptionAsync(() => run.RunAsync());
                    expected = (typeof(UnauthorizedAccessException), ["'guarded'", "'caller'", "set CspNodeOptions.WorkerPoolToken"]);
                    break;
                }

            case "peer lost on barrier":
                {
                    CspNode node = await system.NodeAsync("party");
                    ChildNode home = system.Child("barrier-home", "lost-barrier", "2");
                    await home.ReadyAsync();
                    NamedBarrier barrier = await node.GetBarrierAsync("lost-barrier");
                    await home.KillAsync();
                    error = await Record.ExceptionAsync(async () => await barrier.SyncAsync());
                    expected = (typeof(PeerLostException), ["barrier 'lost-barrier'", "Lost the program 'testnode-barrier-home-", "end this process as on poison"]);
                    break;
                }

            case "peer lost on credited write":
                {
                    CspNode node = await system.NodeAsync("streamer");
                    ChildNode home = system.Child("credit-home", "credited");
                    await home.ReadyAsync();
                    AltingChannelOut<int> output = await node.GetOne2OneOutAsync<int>("credited");
                    AltingChannelIn<int> watch = await node.GetOne2AnyInAsync<int>("credited/watch");
                    await output.WriteAsync(1); // a plain write: the home grants credits before it answers
                    Task<int> watching = watch.ReadAsync().AsTask();
                    await home.KillAsync();
                    await Assert.ThrowsAsync<PeerLostException>(() => watching); // the link has failed
                    error = await Record.ExceptionAsync(async () => await output.WriteAsync(2));
                    expected = (typeof(PeerLostException), ["Writing to 'credited' failed", "Lost the program 'testnode-credit-home-", "end this process as on poison"]);
                    break;
                }

            case "home unreachable":
                {
                    // The home tells the NameServer an address where nothing listens (127.0.0.2: it binds 127.0.0.1).
                    CspNode home = await system.NodeAsync("far-home", o => o.AdvertisedHost = "127.0.0.2");
                    CspNode node = await system.NodeAsync("dialler");
                    await home.GetOne2OneInAsync<int>("far");
                    error = await Record.ExceptionAsync(async () => await node.GetOne2OneOutAsync<int>("far"));
                    expected = (typeof(PeerLostException), ["Getting 'far' failed", "127.0.0.2:", "'dialler'", "Check that it runs"]);
                    break;
                }

            case "value too large":
                {
                    CspNode home = await system.NodeAsync("big-home");
                    CspNode node = await system.NodeAsync("small-writer", o => o.MaxValueSize = 1024);
                    await home.GetOne2OneInAsync<byte[]>("big");
                    AltingChannelOut<byte[]> output = await node.GetOne2OneOutAsync<byte[]>("big");
                    error = await Record.ExceptionAsync(async () => await output.WriteAsync(new byte[4096]));
                    expected = (typeof(InvalidOperationException), ["Writing to 'big' failed", "'small-writer'", "CspNodeOptions.MaxValueSize", "Raise the limit in every program"]);
                    break;
                }

            case "value type cannot cross":
                {
                    CspNode node = await system.NodeAsync("thrower");
                    error = await Record.ExceptionAsync(async () => await node.GetOne2OneInAsync<Func<int>>("delegates"));
                    expected = (typeof(NotSupportedException), ["'delegates'", "'thrower'", "System.Func`1[System.Int32]", "Send data instead"]);
                    break;
                }

            case "pool token missing":
                {
                    await using Workers.PoolSystem pools = await Workers.PoolSystem.StartAsync();
                    await pools.PoolAsync("guarded", 1, configure: o => o.Token = "secret");
                    CspNode client = await pools.NodeAsync("caller");
                    var run = new DistParallel([new Nothing()], client) { Shipper = new Workers.FakeShipping() };
                    error = await Record.ExceptionAsync(() => run.RunAsync());
                    expected = (typeof(UnauthorizedAccessException), ["'guarded'", "'caller'", "requires a token", "set CspNodeOptions.WorkerPoolToken"]);
                    break;
                }

            case "pool certificate missing":
                {
                    using X509Certificate2 server = TestCertificates.SelfSigned("CN=pool", isAuthority: false);
                    using X509Certificate2 authority = TestCertificates.SelfSigned("CN=cspnet test authority", isAuthority: true);
                    await using Workers.PoolSystem pools = await Workers.PoolSystem.StartAsync();
                    await pools.PoolAsync("mtls", 1, configure: o =>
                    {
                        o.Certificate = server;
                        o.ClientCertificateAuthority = authority;
                    });
                    CspNode client = await pools.NodeAsync("caller", o => o.WorkerPoolTrustedCertificate = server);
                    var run = new DistParallel([new Nothing()], client) { Shipper = new Workers.FakeShipping() };
                    error = await Record.ExceptionAsync(() => run.RunAsync());
                    expected = (typeof(UnauthorizedAccessException), ["'mtls'", "'caller'", "client certificate", "CspNodeOptions.WorkerPoolClientCertificate"]);
                    break;
                }

            case "process refused":
                {
                    await using Workers.PoolSystem pools = await Workers.PoolSystem.StartAsync();
                    await pools.PoolAsync("strict", 1);
                    CspNode client = await pools.NodeAsync("caller");
                    var run = new DistParallel([new Nothing()], client) { Shipper = new Workers.FakeShipping { Tamper = true } };
                    AggregateException all = await Assert.ThrowsAsync<AggregateException>(() => run.RunAsync());
                    error = Assert.Single(all.InnerExceptions);
                    expected = (typeof(ProcessRefusedException), ["'strict'", "Nothing", "'caller'", "SHA-256", "ran nowhere"]);
                    break;
                }

            default:
                {
                    int closed = ClosedPort();
                    error = await Record.ExceptionAsync(async () => await CspNode.StartAsync(new CspNodeOptions
                    {
                        NameServer = new Uri($"http://127.0.0.1:{closed}"),
                        NameServerTimeout = TimeSpan.FromSeconds(1),
                        ProgramLabel = "lonely",
                    }));
                    expected = (typeof(NameServerUnavailableException), [$"http://127.0.0.1:{closed}/", "'lonely'", "Check that a NameServer runs there"]);
                    break;
                }
        }

        Assert.NotNull(error);
        Assert.IsType(expected.type, error);
        foreach (string part in expected.says)
        {
            Assert.Contains(part, error.Message, StringComparison.Ordinal);
        }

        Assert.DoesNotContain("subchannel", error.Message, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("HttpIOException", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("Error reading next message", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("StatusCode", error.Message, StringComparison.Ordinal);
    }

    private sealed class Nothing : ICSPProcess
    {
        public void Run()
        {
        }
    }

    private static int ClosedPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
