// Shared by the service programs (NameServer/, WorkerPoolService/), compiled into each: how a
// CspNet service reads its configuration, becomes a systemd or Windows service, and reports the
// usual ways of failing to run, so that both behave the same for an operator.
using System;
using System.Collections.Generic;
using System.IO;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace CspNet.Services;

/// <summary>The common start and run of a CspNet service program.</summary>
internal static class ServiceProgram
{
    /// <summary>
    /// A builder whose configuration is, later wins: appsettings.json next to the program,
    /// environment variables prefixed CSPNET_, then the command line with <paramref name="switches"/>.
    /// </summary>
    /// <param name="args">The command line.</param>
    /// <param name="switches">Short switches (<c>--port</c>) and the configuration keys they set.</param>
    /// <param name="windowsServiceName">The name under the Windows service manager.</param>
    internal static WebApplicationBuilder CreateBuilder(string[] args, Dictionary<string, string> switches, string windowsServiceName)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions
        {
            Args = args,
            ContentRootPath = AppContext.BaseDirectory,
        });
        builder.Configuration.AddEnvironmentVariables("CSPNET_");
        builder.Configuration.AddCommandLine(args, new Dictionary<string, string>(switches, StringComparer.OrdinalIgnoreCase));

        // Each is a no-op unless the program runs under systemd or the Windows service manager.
        builder.Services.AddSystemd();
        builder.Services.AddWindowsService(service => service.ServiceName = windowsServiceName);
        return builder;
    }

    /// <summary>Runs the service; returns 0, or 1 after printing why it could not run (most often a port in use).</summary>
    /// <param name="app">The built service.</param>
    /// <param name="program">The program's name for messages, e.g. <c>cspnet-nameserver</c>.</param>
    /// <param name="isStartFailure">Which other exceptions mean the service could not start (printed, exit code 1).</param>
    internal static async Task<int> RunAsync(WebApplication app, string program, Func<Exception, bool>? isStartFailure = null)
    {
        try
        {
            await app.RunAsync().ConfigureAwait(false);
            return 0;
        }
        catch (Exception e) when (e is IOException || (isStartFailure?.Invoke(e) ?? false))
        {
            Console.Error.WriteLine(program + ": " + e.Message);
            return 1;
        }
    }

    /// <summary>Prints a configuration mistake without a stack trace; returns the usage-error exit code 2.</summary>
    internal static int ConfigurationError(string program, Exception e)
    {
        Console.Error.WriteLine(program + ": " + e.Message);
        return 2;
    }
}
