using CspNet.Remote.Tests.Named;

namespace CspNet.Remote.Tests.Samples;

/// <summary>
/// Runs samples/AltProgram from its build output: a NameServer in the program, two worker pools as
/// child programs, and listing 6 (AltReader and two AddIntegers) shipped to them with DistParallel.
/// </summary>
public class AltProgramSampleTests
{
    [Fact(Timeout = 90_000)]
    public async Task AltProgram_Listing6OnTwoPools_ReadsEverySumRemotelyAndExitsCleanly()
    {
        await using ChildNode program = ChildNode.StartProgram(Path.Combine("samples", "AltProgram"), "AltProgram");

        await program.WaitForAsync("result 37250 (expected 37250); 3 processes ran on the pools, 0 locally");
        Assert.Equal(0, await program.ExitAsync());
    }
}
