using System.Collections.Concurrent;
using System.Diagnostics;
using OpenQA.Selenium;
using OpenQA.Selenium.Chrome;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>
/// The system's Chromium (Debian packages <c>chromium</c> and <c>chromium-driver</c>), headless,
/// driven through its own chromedriver: nothing is downloaded. Disposing quits the browser and
/// kills chromedriver's whole process tree whatever state it is in; any browser process still
/// alive when the test run ends is killed too, so none outlives the suite.
/// </summary>
internal sealed class HeadlessChromium : IDisposable
{
    internal const string BrowserPath = "/usr/bin/chromium";
    internal const string DriverPath = "/usr/bin/chromedriver";
    private static readonly ConcurrentDictionary<int, Process> Alive = new();

    private readonly ChromeDriverService _service;
    private readonly Process? _driverProcess;
    private bool _disposed;

    static HeadlessChromium() => AppDomain.CurrentDomain.ProcessExit += (_, _) => KillAll();

    private HeadlessChromium(ChromeDriverService service, ChromeDriver driver, string profile)
    {
        _service = service;
        Driver = driver;
        Profile = profile;
        _driverProcess = Process.GetProcessById(service.ProcessId);
        Alive[_driverProcess.Id] = _driverProcess;
    }

    internal ChromeDriver Driver { get; }

    /// <summary>The browser's own profile folder, deleted on dispose; every browser process names it on its command line.</summary>
    internal string Profile { get; }

    /// <summary>Starts the browser; fails the test, saying what to install, when Chromium or chromedriver is missing.</summary>
    internal static HeadlessChromium Start()
    {
        foreach (string program in new[] { BrowserPath, DriverPath })
        {
            Assert.True(
                File.Exists(program),
                $"{program} is missing: this test needs the system's Chromium and its driver. Install them with `apt-get install chromium chromium-driver` (Debian; .ci/run does it).");
        }

        string profile = Directory.CreateTempSubdirectory("cspnet-chromium-").FullName;
        ChromeDriverService service = ChromeDriverService.CreateDefaultService(Path.GetDirectoryName(DriverPath)!, Path.GetFileName(DriverPath));
        service.HideCommandPromptWindow = true;
        service.SuppressInitialDiagnosticInformation = true;
        var options = new ChromeOptions { BinaryLocation = BrowserPath };
        options.AddArguments(
            "--headless=new",
            "--no-sandbox",                       // CI runs as root, where Chromium's sandbox refuses to start
            "--disable-dev-shm-usage",
            "--disable-gpu",
            "--window-size=1100,620",
            "--user-data-dir=" + profile,
            "--no-first-run",
            "--disable-background-networking",    // no update checks or other traffic of its own
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions");
        ChromeDriver driver;
        try
        {
            driver = new ChromeDriver(service, options, TimeSpan.FromSeconds(60));
        }
        catch
        {
            if (service.ProcessId > 0)
            {
                KillTree(service.ProcessId);
            }

            service.Dispose();
            DeleteProfile(profile);
            throw;
        }

        return new HeadlessChromium(service, driver, profile);
    }

    /// <summary>Starts the browser on another thread (it takes seconds) while the test sets up; disposing the result disposes the browser if it started.</summary>
    internal static Starting StartInBackground() => new(Task.Run(Start));

    /// <summary>The ids of live processes whose command line names <paramref name="profile"/> (Linux).</summary>
    internal static IReadOnlyList<int> ProcessesUsing(string profile)
    {
        var ids = new List<int>();
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out int id))
            {
                continue;
            }

            try
            {
                if (File.ReadAllText(Path.Combine(dir, "cmdline")).Contains(profile, StringComparison.Ordinal))
                {
                    ids.Add(id);
                }
            }
            catch (IOException)
            {
                // The process ended while we looked.
            }
            catch (UnauthorizedAccessException)
            {
            }
        }

        return ids;
    }

    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        try
        {
            Driver.Quit();
        }
        catch (WebDriverException)
        {
            // A browser that hangs or died is killed below.
        }
        finally
        {
            Driver.Dispose();
            if (_driverProcess is not null)
            {
                KillTree(_driverProcess.Id);
                Alive.TryRemove(_driverProcess.Id, out _);
                _driverProcess.Dispose();
            }

            _service.Dispose();

            // Chromium's helpers can outlive a killed parent; they all carry the profile path.
            foreach (int id in ProcessesUsing(Profile))
            {
                KillTree(id);
            }

            DeleteProfile(Profile);
        }
    }

    private static void KillTree(int id)
    {
        try
        {
            using Process process = Process.GetProcessById(id);
            process.Kill(entireProcessTree: true);
            process.WaitForExit(5_000);
        }
        catch (ArgumentException)
        {
            // Already gone (or never started).
        }
        catch (InvalidOperationException)
        {
        }
    }

    private static void DeleteProfile(string profile)
    {
        try
        {
            Directory.Delete(profile, recursive: true);
        }
        catch (IOException)
        {
            // A file still being released; the folder is in the temporary directory.
        }
    }

    private static void KillAll()
    {
        foreach (Process process in Alive.Values)
        {
            try
            {
                process.Kill(entireProcessTree: true);
            }
            catch (InvalidOperationException)
            {
            }
        }
    }

    /// <summary>A browser being started; <see cref="Browser"/> is the browser once it runs.</summary>
    internal sealed class Starting(Task<HeadlessChromium> browser) : IAsyncDisposable
    {
        internal Task<HeadlessChromium> Browser => browser;

        public async ValueTask DisposeAsync()
        {
            // A start that failed was already reported to the test when it awaited Browser.
            await Task.WhenAny(browser);
            if (browser.IsCompletedSuccessfully)
            {
                browser.Result.Dispose();
            }
        }
    }
}
