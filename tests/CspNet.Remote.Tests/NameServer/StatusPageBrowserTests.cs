using CspNet.NameServer;
using CspNet.Remote.Tests.Named;
using CspNet.Remote.Workers;
using Grpc.Core;
using Grpc.Net.Client;
using OpenQA.Selenium;
using OpenQA.Selenium.Support.UI;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The status page in a real browser: headless Chromium watches a channel that a child program
/// registers appear, and disappear when the program is killed and its lease runs out. The page
/// reloads itself; the test only reads the DOM as it changes. Needs the Debian packages
/// <c>chromium</c> and <c>chromium-driver</c>, and fails saying so when they are missing.
/// In memory only: the page lists names only from an <see cref="InMemoryNameRegistry"/> (over etcd it
/// shows failures alone, which <see cref="EtcdStatusPageEndpointTests"/> covers).
/// </summary>
public sealed class StatusPageBrowserTests
{
    private const string ChildChannel = "pi.samples";
    private static readonly TimeSpan DomWait = TimeSpan.FromSeconds(30);

    [Fact(Timeout = 120_000)]
    public async Task StatusPage_ChildProgramRegistersAChannelThenIsKilled_ChannelAppearsThenDisappears()
    {
        await using HeadlessChromium.Starting starting = HeadlessChromium.StartInBackground();
        var options = new NameServerHostOptions();
        // A killed program's names go within 5 s; shorter leases expire under a loaded machine's
        // late renewals, making the in-process node's name flicker.
        options.NameServer.LeaseTtl = TimeSpan.FromSeconds(5);
        options.StatusPage.Refresh = TimeSpan.FromSeconds(1);
        await using NameServerHost host = await NameServerHost.StartAsync(options);

        // What else the page shows (and the screenshot in docs/NAMESERVER.md): a channel of this
        // program, a worker pool, and a request the NameServer refused.
        await using CspNode node = await CspNode.StartAsync(new CspNodeOptions { NameServer = host.Uri, ProgramLabel = "status-test" });
        await node.GetOne2OneInAsync<int>("pi.results");
        await using WorkerPoolHost pool = await WorkerPoolHost.StartAsync(new WorkerPoolOptions { Name = "pool-a", Workers = 3, NameServer = host.Uri });
        await RefuseOneRequestAsync(host.Uri);

        HeadlessChromium browser = await starting.Browser;
        OpenQA.Selenium.Chrome.ChromeDriver page = browser.Driver;
        page.Navigate().GoToUrl(new UriBuilder(host.StatusUri!) { UserName = "owner", Password = Uri.EscapeDataString(UserKey.Value) }.Uri);
        Assert.Equal("CspNet NameServer", page.Title);
        Assert.Null(Find(await ReadAsync(page, "names"), ChildChannel));

        string childLabel;
        await using (ChildNode child = ChildNode.Start(host.Uri, "hold-out", "One2Any", ChildChannel))
        {
            await child.ReadyAsync();
            childLabel = $"testnode-hold-out-{child.Id}";

            // The browser is not told to reload: the page's own refresh brings the name in.
            List<string[]> names = await UntilAsync(page, "names", rows => Find(rows, ChildChannel) is not null, $"'{ChildChannel}' never appeared on the page");
            string[] row = Find(names, ChildChannel)!;
            Assert.Equal([ChildChannel, "One2Any", "int32", "none", childLabel], row[..5]);
            Assert.Matches(@"^127\.0\.0\.1:\d+$", row[5]);

            await child.KillAsync();
        }

        await UntilAsync(page, "names", rows => Find(rows, ChildChannel) is null, $"'{ChildChannel}' stayed on the page after its program was killed");
        List<string[]> failures = await UntilAsync(page, "failures", rows => rows.Any(IsChildExpiry), "the killed program's lease expiry never appeared under recent failures");
        Assert.Equal("lease expired", failures.First(IsChildExpiry)[2]);
        await UntilAsync(page, "names", rows => Find(rows, "pi.results") is not null, "this program's channel is missing");
        List<string[]> pools = await UntilAsync(page, "pools", rows => Find(rows, "pool-a") is not null, "the worker pool is missing");
        Assert.Equal(["3", "3", "0"], Find(pools, "pool-a")![2..5]); // workers, free, busy

        bool IsChildExpiry(string[] cells) => cells.Length == 4 && cells[3].StartsWith($"Program '{childLabel}' at 127.0.0.1:", StringComparison.Ordinal);

        // A fresh screenshot in the output folder; docs/images/nameserver-status.png is a copy of one.
        string screenshot = Path.Combine(AppContext.BaseDirectory, "nameserver-status.png");
        ((ITakesScreenshot)page).GetScreenshot().SaveAsFile(screenshot);
        Assert.Equal(new byte[] { 0x89, (byte)'P', (byte)'N', (byte)'G' }, File.ReadAllBytes(screenshot)[..4]);

        browser.Dispose();
        Assert.Empty(HeadlessChromium.ProcessesUsing(browser.Profile));
    }

    private static async Task RefuseOneRequestAsync(Uri nameServer)
    {
        using GrpcChannel channel = UserKey.Channel(nameServer);
        var client = new Proto.NameServer.NameServerClient(channel);
        var request = new Proto.OpenLeaseRequest { Endpoint = new Proto.Endpoint { Host = "127.0.0.1", Port = 0 }, Program = "misconfigured" };
        var e = await Assert.ThrowsAsync<RpcException>(async () => await client.OpenLeaseAsync(request));
        Assert.Equal(StatusCode.InvalidArgument, e.StatusCode);
    }

    /// <summary>The row whose first cell is <paramref name="first"/>, or <see langword="null"/>.</summary>
    private static string[]? Find(List<string[]> rows, string first) => rows.FirstOrDefault(cells => cells.Length > 0 && cells[0] == first);

    /// <summary>
    /// The rows of one of the page's tables, each as its cells' texts, or <see langword="null"/>
    /// while a reload is under way. One script reads them all, so the rows come from one complete
    /// page (the page itself has no script; WebDriver's is not bound by its content policy).
    /// </summary>
    private static List<string[]>? Rows(IWebDriver page, string table)
    {
        const string Script = """
            if (document.readyState !== 'complete' || !document.getElementById('end')) return null;
            return Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr'), tr => Array.from(tr.cells, td => td.textContent));
            """;
        return ((IJavaScriptExecutor)page).ExecuteScript(Script, table) is IEnumerable<object> rows
            ? rows.Select(row => ((IEnumerable<object>)row).Select(cell => (string)cell).ToArray()).ToList()
            : null;
    }

    /// <summary>The rows of <paramref name="table"/> as soon as a complete page is loaded.</summary>
    private static Task<List<string[]>> ReadAsync(IWebDriver page, string table) =>
        UntilAsync(page, table, _ => true, "the page never finished loading");

    /// <summary>
    /// Waits on the DOM (WebDriverWait polls it) off the test's thread until the rows of
    /// <paramref name="table"/> on a complete page satisfy <paramref name="condition"/>, and returns them.
    /// </summary>
    private static async Task<List<string[]>> UntilAsync(IWebDriver page, string table, Func<List<string[]>, bool> condition, string failure)
    {
        var wait = new WebDriverWait(page, DomWait) { Message = failure };
        return await Task.Run(() => wait.Until(p => Rows(p, table) is { } rows && condition(rows) ? rows : null)!);
    }
}
