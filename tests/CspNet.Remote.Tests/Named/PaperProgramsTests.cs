namespace CspNet.Remote.Tests.Named;

/// <summary>
/// Listings 4 and 5 of the CSP.NET paper as printed, each in its own program
/// (tests/CspNet.Remote.TestNode "paper-writer" and "paper-reader"): the programs call
/// <c>CspManager.Init</c> and simply return from <c>Main</c>, without <c>CspManager.Shutdown()</c>.
/// </summary>
public sealed class PaperProgramsTests
{
    [Fact(Timeout = 90_000)]
    public async Task AltReader_WriterProgramsReturnFromMain_SumIsCompleteAndReaderEndsByItsTimeout()
    {
        await using TestSystem system = await TestSystem.StartAsync();

        // In any order: the reader reads one line from each writer before it starts listing 5.
        ChildNode reader = system.Child("paper-reader");
        ChildNode plus = system.Child("paper-writer", "plus", "100");
        ChildNode minus = system.Child("paper-writer", "minus", "50");
        await reader.WaitForAsync("ready");

        // 100 sums of 1..99 (4950) added, 100 sums of 1..49 (1225) subtracted.
        await reader.WaitForAsync($"done result {100 * (4950 - 1225)}");
        Assert.Equal(0, await reader.ExitAsync());
        await plus.WaitForAsync("done wrote 100");
        await minus.WaitForAsync("done wrote 100");
        Assert.Equal(0, await plus.ExitAsync());
        Assert.Equal(0, await minus.ExitAsync());
    }
}
