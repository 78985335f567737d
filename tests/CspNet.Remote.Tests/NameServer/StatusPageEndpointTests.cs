using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using CspNet.NameServer;
using CspNet.NameServer.Internal.StatusReporting;
using Grpc.Core;
using Grpc.Net.Client;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The status page as <see cref="NameServerHost"/> serves it: HTTP/1.1, headers, who may read it,
/// on each registry (<see cref="InMemoryStatusPageEndpointTests"/>, <see cref="EtcdStatusPageEndpointTests"/>).
/// </summary>
public abstract class StatusPageEndpointTests(EtcdFixture? etcd) : RegistryTests(etcd)
{
    private const int Timeout = 30_000;
    private const string Key = "status-page-test-key";

    [RegistryFact(Timeout = Timeout)]
    public async Task StatusUri_DefaultHost_ServesAScriptlessPageOverHttp11()
    {
        await using NameServerHost host = await StartHostAsync();
        using var http = UserKey.Http(new HttpClientHandler { AllowAutoRedirect = false });

        using HttpResponseMessage page = await http.GetAsync(host.StatusUri);
        using HttpResponseMessage root = await http.GetAsync(new Uri(host.StatusUri!, "/"));

        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        Assert.Equal(HttpVersion.Version11, page.Version);
        Assert.Equal("text/html", page.Content.Headers.ContentType!.MediaType);
        Assert.StartsWith("default-src 'none'", page.Headers.GetValues("Content-Security-Policy").Single(), StringComparison.Ordinal);
        Assert.True(page.Headers.CacheControl!.NoStore);
        string html = await page.Content.ReadAsStringAsync();
        // Only the in-memory registry lists its names on the page; over etcd the page says so.
        Assert.Contains(OnEtcd ? "cannot list its names" : "No names are registered.", html, StringComparison.Ordinal);
        Assert.DoesNotContain("<script", html, StringComparison.OrdinalIgnoreCase);
        Assert.NotEqual(host.Port, host.StatusUri!.Port);
        Assert.Equal(HttpStatusCode.Redirect, root.StatusCode);
        Assert.Equal("/status", root.Headers.Location!.OriginalString);
    }

    [RegistryFact(Timeout = Timeout)]
    public async Task StatusJson_RefusedGrpcRequest_IsListedAsARecentFailure()
    {
        await using NameServerTestHost server = await StartTestHostAsync();
        var bad = new Proto.OpenLeaseRequest { Endpoint = new Proto.Endpoint { Host = "127.0.0.1", Port = 0 }, Program = "misconfigured" };
        await Assert.ThrowsAsync<RpcException>(async () => await server.Client.OpenLeaseAsync(bad));
        using var http = UserKey.Http();

        using JsonDocument json = JsonDocument.Parse(await http.GetStringAsync(new Uri(server.Host.StatusUri + ".json")));

        JsonElement failure = Assert.Single(json.RootElement.GetProperty("failures").EnumerateArray());
        Assert.Equal("Refused", failure.GetProperty("kind").GetString());
        Assert.Contains("OpenLease from ipv4:127.0.0.1:", failure.GetProperty("reason").GetString(), StringComparison.Ordinal);
        Assert.Contains("InvalidArgument", failure.GetProperty("reason").GetString(), StringComparison.Ordinal);
    }

    [RegistryFact(Timeout = Timeout)]
    public async Task StatusPage_ClusterKey_RequiredAsBasicPasswordOrHeader()
    {
        var options = new NameServerHostOptions();
        options.NameServer.ClusterKey = Key;
        await using NameServerHost host = await StartHostAsync(options);
        using (GrpcChannel channel = GrpcChannel.ForAddress(host.Uri))
        {
            var stranger = new Proto.NameServer.NameServerClient(channel);
            var e = await Assert.ThrowsAsync<RpcException>(async () => await stranger.ResolveAsync(new Proto.ResolveRequest { Name = "x" }));
            Assert.Equal(StatusCode.Unauthenticated, e.StatusCode);
        }

        using var http = new HttpClient();

        using HttpResponseMessage anonymous = await http.GetAsync(host.StatusUri);
        using HttpResponseMessage wrong = await SendAsync(http, host.StatusUri!, request => request.Headers.Authorization = Basic("admin", "guess"));
        using HttpResponseMessage basic = await SendAsync(http, host.StatusUri!, request => request.Headers.Authorization = Basic("anyone", Key));
        using HttpResponseMessage header = await SendAsync(http, new Uri(host.StatusUri + ".json"), request => request.Headers.Add("x-cspnet-cluster-key", Key));

        Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
        Assert.Equal("Basic", anonymous.Headers.WwwAuthenticate.Single().Scheme);
        Assert.Contains("cluster key", await anonymous.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.DoesNotContain("<table", await anonymous.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.Unauthorized, wrong.StatusCode);
        Assert.Equal(HttpStatusCode.OK, basic.StatusCode);
        Assert.Equal(HttpStatusCode.OK, header.StatusCode);
        using JsonDocument json = JsonDocument.Parse(await header.Content.ReadAsStringAsync());
        JsonElement failure = Assert.Single(json.RootElement.GetProperty("failures").EnumerateArray());
        Assert.Equal("Unauthenticated", failure.GetProperty("kind").GetString());
    }

    [RegistryFact(Timeout = Timeout)]
    public async Task StatusPage_NoKeyConfigured_AsksForThisUsersKeyEvenOnThisMachine()
    {
        // Loopback is shared by every user of the machine: the page lists every name, so it asks
        // for the key of the user that runs the NameServer; a DNS-rebinding page cannot know it.
        await using NameServerHost host = await StartHostAsync();
        using var anonymousHttp = new HttpClient();
        using HttpClient owner = UserKey.Http();

        using HttpResponseMessage anonymous = await anonymousHttp.GetAsync(host.StatusUri);
        using HttpResponseMessage rebound = await SendAsync(anonymousHttp, host.StatusUri!, request => request.Headers.Host = "attacker.example:" + host.StatusUri!.Port);
        using HttpResponseMessage mine = await owner.GetAsync(host.StatusUri);

        Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, rebound.StatusCode);
        Assert.Equal(HttpStatusCode.OK, mine.StatusCode);
    }

    [RegistryFact(Timeout = Timeout)]
    public async Task StartAsync_StatusPageDisabled_HasNoStatusUri()
    {
        var options = new NameServerHostOptions();
        options.StatusPage.Enabled = false;

        await using NameServerHost host = await StartHostAsync(options);

        Assert.Null(host.StatusUri);
    }

    [RegistryFact(Timeout = Timeout)]
    public async Task StartAsync_StatusPageOnAllInterfacesWithoutKey_ThrowsSayingWhatToSet()
    {
        var options = new NameServerHostOptions();
        options.StatusPage.Address = IPAddress.Any;

        var e = await Assert.ThrowsAsync<ArgumentException>(() => StartHostAsync(options));

        Assert.Contains("ClusterKey", e.Message, StringComparison.Ordinal);
        Assert.Contains("StatusPage.Enabled = false", e.Message, StringComparison.Ordinal);
    }

    [RegistryFact]
    public void Validate_RefreshNotWholeSeconds_Throws()
    {
        var options = new NameServerStatusPageOptions { Refresh = TimeSpan.FromMilliseconds(1500) };

        var e = Assert.Throws<ArgumentOutOfRangeException>(options.Validate);

        Assert.Equal("Refresh", e.ParamName);
    }

    private static AuthenticationHeaderValue Basic(string user, string password) =>
        new("Basic", Convert.ToBase64String(Encoding.UTF8.GetBytes(user + ":" + password)));

    private static async Task<HttpResponseMessage> SendAsync(HttpClient http, Uri uri, Action<HttpRequestMessage> configure)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, uri);
        configure(request);
        return await http.SendAsync(request);
    }
}

/// <summary>The page of a NameServer that keeps its table in memory (the default).</summary>
public sealed class InMemoryStatusPageEndpointTests() : StatusPageEndpointTests(null);

/// <summary>The page of a NameServer that keeps its table in one etcd for the class.</summary>
[RequiresEtcd]
public sealed class EtcdStatusPageEndpointTests(EtcdFixture etcd) : StatusPageEndpointTests(etcd), IClassFixture<EtcdFixture>;
