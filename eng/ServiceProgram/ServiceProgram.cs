// Shared by the service programs (NameServer/, WorkerPoolService/), compiled into each: how a
// CspNet service reads its configuration, becomes a systemd or Windows service, and reports the
// usual ways of failing to run, so that both behave the same for an operator.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
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

    /// <summary>Prints <paramref name="help"/> to standard output when the command line asks for it.</summary>
    /// <returns>Whether it was asked for (<c>--help</c>, <c>-h</c> or <c>-?</c>): the program then exits with 0.</returns>
    internal static bool PrintHelpIfAsked(string[] args, string help)
    {
        if (!args.Any(static a => a is "--help" or "-h" or "-?" or "/?"))
        {
            return false;
        }

        Console.Out.Write(help);
        return true;
    }

    /// <summary>
    /// Reads the secrets of <paramref name="secrets"/> from the files their <c>FileKey</c>s name (a
    /// command-line switch, environment variable or appsettings.json key), over whatever configuration
    /// set them otherwise, and refuses a secret given on the command line: any user of the machine can
    /// read another's command line (ps, /proc), while a file or the service's environment is private.
    /// </summary>
    /// <param name="builder">The builder from <see cref="CreateBuilder"/>.</param>
    /// <param name="args">The command line.</param>
    /// <param name="switches">The program's short switches, so a secret's own switch is recognised too.</param>
    /// <param name="secrets">Each secret's configuration key, the key naming its file, and the switch of that key.</param>
    /// <exception cref="ArgumentException">A secret is on the command line, or its file is empty.</exception>
    /// <exception cref="IOException">A secret's file cannot be read.</exception>
    internal static void ReadSecrets(WebApplicationBuilder builder, string[] args, Dictionary<string, string> switches, IEnumerable<(string Key, string FileKey, string FileSwitch)> secrets)
    {
        IConfigurationRoot commandLine = new ConfigurationBuilder()
            .AddCommandLine(args, new Dictionary<string, string>(switches, StringComparer.OrdinalIgnoreCase))
            .Build();
        var fromFiles = new Dictionary<string, string?>(StringComparer.OrdinalIgnoreCase);
        foreach ((string key, string fileKey, string fileSwitch) in secrets)
        {
            if (commandLine[key] is not null)
            {
                throw new ArgumentException(
                    $"{key} is not read from the command line, where other users of this machine can see it: put it in a file named by {fileSwitch} " +
                    $"({fileKey}), or in the environment variable CSPNET_{key.Replace(":", "__", StringComparison.Ordinal)}.");
            }

            if (builder.Configuration[fileKey] is { Length: > 0 } path)
            {
                // One line, as `echo secret > file` writes it: the line break is not part of the secret.
                string secret = File.ReadAllText(path).TrimEnd('\r', '\n');
                fromFiles[key] = secret.Length > 0 ? secret : throw new ArgumentException($"{fileKey} names {path}, which is empty: write the secret into it.");
            }
        }

        builder.Configuration.AddInMemoryCollection(fromFiles);
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
