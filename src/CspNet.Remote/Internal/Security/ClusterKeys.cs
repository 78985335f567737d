using System;
using System.Collections.Concurrent;
using System.IO;
using System.Security.Cryptography;

namespace CspNet.Remote.Internal.Security;

/// <summary>
/// The cluster key a program, NameServer or pool uses when none is configured: a random secret of
/// the operating-system user, in a file only that user can read. So with no configuration only
/// programs of the same user can talk to each other (loopback is shared by every user of a
/// machine); other users get UNAUTHENTICATED. Sharing with other users is explicit: give every
/// party the same key (an explicit key, or a key file a group can read).
/// </summary>
/// <remarks>
/// The file is <c>$XDG_RUNTIME_DIR/cspnet/cluster.key</c> (a per-user directory that lives as long
/// as the user's session), else <c>~/.cspnet/cluster.key</c>, else (Windows) under the local
/// application data folder. The directory is created 0700 and the file 0600, atomically: programs
/// starting at the same time all end up with the same key.
/// </remarks>
internal static class ClusterKeys
{
    /// <summary>The environment variable that moves the per-user key file (tests, unusual layouts).</summary>
    internal const string FileVariable = "CSPNET_USER_KEY_FILE";

    private static readonly ConcurrentDictionary<string, string> Loaded = new(StringComparer.Ordinal);

    /// <summary>The per-user key file's path.</summary>
    internal static string UserKeyPath
    {
        get
        {
            if (Environment.GetEnvironmentVariable(FileVariable) is { Length: > 0 } configured)
            {
                return configured;
            }

            if (Environment.GetEnvironmentVariable("XDG_RUNTIME_DIR") is { Length: > 0 } runtime && Directory.Exists(runtime))
            {
                return Path.Combine(runtime, "cspnet", "cluster.key");
            }

            string home = OperatingSystem.IsWindows()
                ? Environment.GetFolderPath(Environment.SpecialFolder.LocalApplicationData)
                : Environment.GetFolderPath(Environment.SpecialFolder.UserProfile);
            return Path.Combine(home, OperatingSystem.IsWindows() ? "CspNet" : ".cspnet", "cluster.key");
        }
    }

    /// <summary><paramref name="configured"/> when set, else this user's key (created on first use).</summary>
    internal static string Effective(string? configured) =>
        string.IsNullOrEmpty(configured) ? Loaded.GetOrAdd(UserKeyPath, static path => LoadOrCreate(path)) : configured;

    /// <summary>Reads a key from a file: its first line, trimmed.</summary>
    /// <exception cref="ArgumentException">The file is missing, empty, or readable or writable by every user.</exception>
    internal static string ReadKeyFile(string path, string setting)
    {
        if (!File.Exists(path))
        {
            throw new ArgumentException($"{setting}: the file '{path}' does not exist.", setting);
        }

        if (!OperatingSystem.IsWindows() && (File.GetUnixFileMode(path) & (UnixFileMode.OtherRead | UnixFileMode.OtherWrite)) != 0)
        {
            throw new ArgumentException($"{setting}: '{path}' can be read or written by every user of this machine; restrict it (chmod o-rwx, and give a group read access to share it).", setting);
        }

        using var reader = new StreamReader(path);
        string key = (reader.ReadLine() ?? string.Empty).Trim();
        return key.Length > 0 ? key : throw new ArgumentException($"{setting}: the file '{path}' is empty.", setting);
    }

    private static string LoadOrCreate(string path)
    {
        if (File.Exists(path))
        {
            return ReadKeyFile(path, "the per-user cluster key");
        }

        string directory = Path.GetDirectoryName(path)!;
        if (OperatingSystem.IsWindows())
        {
            Directory.CreateDirectory(directory);
        }
        else
        {
            Directory.CreateDirectory(directory, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }

        // Written under another name and linked into place without overwriting: a program that
        // races this one either wins (and this one reads its key) or loses, never half a file.
        string key = Convert.ToBase64String(RandomNumberGenerator.GetBytes(32));
        string temporary = path + "." + Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture) + "." + Guid.NewGuid().ToString("N");
        var create = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            create.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }

        using (var writer = new StreamWriter(temporary, System.Text.Encoding.ASCII, create))
        {
            writer.WriteLine(key);
        }

        try
        {
            File.Move(temporary, path, overwrite: false);
            return key;
        }
        catch (IOException) when (File.Exists(path))
        {
            File.Delete(temporary);
            return ReadKeyFile(path, "the per-user cluster key");
        }
    }
}
