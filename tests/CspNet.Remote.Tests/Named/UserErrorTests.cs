using System.Net;
using System.Net.Sockets;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Tests.Named;

/// <summary>
/// The errors a user meets in the distributed layer, one row each: the exception's type is the
/// documented one, and its message names the construct (or the NameServer's address) and says
/// what to do, in the user's words rather than the transport's.
/// </summary>
public sealed class UserErrorTests
{
    public static TheoryData<string> Scenarios() => ["taken name", "taken name in this program", "wrong kind", "NameServer down"];

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
    }

    private static int ClosedPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
