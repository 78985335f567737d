using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;

namespace CspNet.Remote.Tests;

/// <summary>Addresses of this machine for tests that need "another machine" without leaving it.</summary>
internal static class TestNetwork
{
    /// <summary>An IPv4 address of this machine that is not loopback, or null when it has none (a test then skips).</summary>
    internal static IPAddress? NonLoopbackAddress() =>
        NetworkInterface.GetAllNetworkInterfaces()
            .Where(static nic => nic.OperationalStatus == OperationalStatus.Up)
            .SelectMany(static nic => nic.GetIPProperties().UnicastAddresses)
            .Select(static unicast => unicast.Address)
            .FirstOrDefault(static address => address.AddressFamily == AddressFamily.InterNetwork && !IPAddress.IsLoopback(address));
}

/// <summary>A fact that needs a non-loopback address of this machine; skipped, saying why, where there is none.</summary>
internal sealed class NonLoopbackFactAttribute : FactAttribute
{
    public NonLoopbackFactAttribute()
    {
        if (TestNetwork.NonLoopbackAddress() is null)
        {
            Skip = "This machine has no non-loopback IPv4 address to stand for another machine.";
        }
    }
}
