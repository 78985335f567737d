namespace CspNet.Remote.Tests;

/// <summary>Secret files (mode 0600) in a folder of their own, deleted on dispose: how tests hand programs a key without a command line.</summary>
internal sealed class KeyFiles : IDisposable
{
    private readonly string _folder = Directory.CreateTempSubdirectory("cspnet-keys-").FullName;
    private int _count;

    /// <summary>Writes <paramref name="secret"/> to a new file readable by this user only and returns its path.</summary>
    internal string Write(string secret)
    {
        string path = Path.Combine(_folder, $"key{++_count}");
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }

        using (var writer = new StreamWriter(path, new System.Text.UTF8Encoding(false), options))
        {
            writer.WriteLine(secret);
        }

        return path;
    }

    public void Dispose() => Directory.Delete(_folder, recursive: true);
}
