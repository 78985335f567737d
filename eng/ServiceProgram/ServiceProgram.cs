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
        RefuseSecretsOnCommandLine(args);
        builder.Configuration.AddEnvironmentVariables("CSPNET_");
        builder.Configuration.AddCommandLine(args, new Dictionary<string, string>(switches, StringComparer.OrdinalIgnoreCase));

        // Each is a no-op unless the program runs under systemd or the Windows service manager.
        builder.Services.AddSystemd();
        builder.Services.AddWindowsService(service => service.ServiceName = windowsServiceName);
        return builder;
    }

    /// <summary>
    /// Refuses a secret (token, cluster key, password) on the command line: every user of the
    /// machine can read it (<c>/proc/PID/cmdline</c>, <c>ps</c>). Secrets come from files the
    /// service's user alone can read (<c>--token-file</c>, <c>--cluster-key-file</c>,
    /// <c>--certificate-password-file</c>, or a configuration key ending in <c>File</c>) or from
    /// the environment.
    /// </summary>
    /// <exception cref="ArgumentException">A secret is on the command line; the message says what to use instead.</exception>
    internal static void RefuseSecretsOnCommandLine(string[] args)
    {
        foreach (string arg in args)
        {
            if (!arg.StartsWith('-') && !arg.StartsWith('/'))
            {
                continue;
            }

            string name = arg.TrimStart('-', '/').Split('=')[0];
            string last = name.Split(':', StringSplitOptions.RemoveEmptyEntries) is [.., { } tail] ? tail.Replace("-", "", StringComparison.Ordinal) : name;
            if (Array.Exists(SecretSettings, secret => string.Equals(secret, last, StringComparison.OrdinalIgnoreCase)))
            {
                string instead = name.Contains(':', StringComparison.Ordinal) ? $"--{name}File FILE" : $"--{name}-file FILE";
                throw new ArgumentException(
                    $"--{name} is not accepted: a command line can be read by every user of this machine. Put the secret in a file only this service's user can read and give {instead}, or set it in the environment (CSPNET_...).");
            }
        }
    }

    /// <summary>
    /// Reads each secret <c>KEY</c> of <paramref name="keys"/> from the file <c>KEYFile</c> names,
    /// when it does: the file's first line. A file every user may read is refused.
    /// </summary>
    /// <exception cref="ArgumentException">A file is missing, empty, or open to every user.</exception>
    internal static void ReadSecretFiles(ConfigurationManager configuration, params string[] keys)
    {
        foreach (string key in keys)
        {
            if (configuration[key + "File"] is not { Length: > 0 } path)
            {
                continue;
            }

            if (!File.Exists(path))
            {
                throw new ArgumentException($"{key}File: the file '{path}' does not exist.");
            }

            if (!OperatingSystem.IsWindows() && (File.GetUnixFileMode(path) & (UnixFileMode.OtherRead | UnixFileMode.OtherWrite)) != 0)
            {
                throw new ArgumentException($"{key}File: '{path}' can be read or written by every user of this machine; restrict it (chmod o-rwx).");
            }

            using var reader = new StreamReader(path);
            string secret = (reader.ReadLine() ?? string.Empty).Trim();
            configuration[key] = secret.Length > 0 ? secret : throw new ArgumentException($"{key}File: the file '{path}' is empty.");
        }
    }

    private static readonly string[] SecretSettings = ["Token", "ClusterKey", "CertificatePassword", "Password"];

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
