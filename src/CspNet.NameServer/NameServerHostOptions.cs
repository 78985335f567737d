using System;
using System.Net;
using System.Threading.Tasks;
using CspNet.NameServer.Internal.StatusReporting;
using Microsoft.Extensions.Logging;

namespace CspNet.NameServer;

/// <summary>Settings of a <see cref="NameServerHost"/>.</summary>
public sealed class NameServerHostOptions
{
    /// <summary>The address to listen on. Default <see cref="IPAddress.Loopback"/>: only this machine can reach it.</summary>
    public IPAddress Address { get; set; } = IPAddress.Loopback;

    /// <summary>The TCP port to listen on; 0 (the default) picks a free port, which <see cref="NameServerHost.Port"/> reports.</summary>
    public int Port { get; set; }

    /// <summary>The NameServer's own settings.</summary>
    public NameServerOptions NameServer { get; } = new();

    /// <summary>The status page: on by default, on its own HTTP/1.1 endpoint on 127.0.0.1 and a free port.</summary>
    public NameServerStatusPageOptions StatusPage { get; } = new();

    /// <summary>Where the host logs; nothing is logged when <see langword="null"/> (the default).</summary>
    public ILoggerFactory? LoggerFactory { get; set; }

    /// <summary>The clock for leases and waits; <see cref="System.TimeProvider.System"/> when <see langword="null"/>.</summary>
    public TimeProvider? TimeProvider { get; set; }

    /// <summary>How long stopping waits for calls in progress. Default 5 seconds.</summary>
    public TimeSpan ShutdownTimeout { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Runs on the registry after it is built and before the server listens: tests set up a registry no program can reach first.</summary>
    internal Func<INameRegistry, Task>? BeforeListening { get; set; }

    /// <summary>Adds to the host's services after the NameServer's own: tests put the table in etcd (<c>AddCspEtcdNameRegistry</c>).</summary>
    internal Action<Microsoft.Extensions.DependencyInjection.IServiceCollection>? ConfigureServices { get; set; }
}
