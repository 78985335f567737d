using System.Net.Sockets;
using System.Text;

namespace CspNet.Remote.Tests.Services;

/// <summary>
/// The test's side of the systemd notification protocol: a Unix datagram socket whose path is
/// given to the service as NOTIFY_SOCKET, where it sends states such as <c>READY=1</c>.
/// </summary>
internal sealed class NotifySocket : IDisposable
{
    private readonly Socket _socket = new(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);

    public NotifySocket(string folder)
    {
        // Short: a Unix socket path has at most 107 bytes.
        Path = System.IO.Path.Combine(folder, "notify-" + Guid.NewGuid().ToString("N")[..8]);
        _socket.Bind(new UnixDomainSocketEndPoint(Path));
    }

    /// <summary>The socket's path, the value of NOTIFY_SOCKET.</summary>
    public string Path { get; }

    /// <summary>Receives messages until one holds <paramref name="state"/> (a line such as <c>READY=1</c>); returns all of them.</summary>
    public async Task<string> ReceiveUntilAsync(string state)
    {
        byte[] buffer = new byte[4096];
        var received = new StringBuilder();
        while (true)
        {
            int length = await _socket.ReceiveAsync(buffer, SocketFlags.None);
            string message = Encoding.UTF8.GetString(buffer, 0, length);
            received.AppendLine(message);
            if (message.Split('\n').Contains(state))
            {
                return received.ToString();
            }
        }
    }

    public void Dispose()
    {
        _socket.Dispose();
        File.Delete(Path);
    }
}
