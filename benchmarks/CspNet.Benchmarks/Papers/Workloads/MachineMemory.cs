namespace CspNet.Benchmarks.Papers;

/// <summary>Machine memory as the OS reports it (Linux /proc/meminfo); -1 where unknown.</summary>
internal static class MachineMemory
{
    internal static long AvailableBytes() => Read("MemAvailable:");

    internal static long TotalBytes() => Read("MemTotal:");

    private static long Read(string key)
    {
        try
        {
            foreach (string line in File.ReadLines("/proc/meminfo"))
            {
                if (line.StartsWith(key, StringComparison.Ordinal))
                {
                    string[] parts = line[key.Length..].Trim().Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return long.Parse(parts[0], System.Globalization.CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (IOException)
        {
        }
        catch (UnauthorizedAccessException)
        {
        }

        return -1;
    }
}
