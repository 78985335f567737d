using System.Buffers;
using System.Runtime.Loader;
using CspNet.Remote.Internal.Workers;
using CspNet.Remote.TestJobs;
using MessagePack;

namespace CspNet.Remote.Tests.Workers;

/// <summary>
/// Shipping a process: packing its state and assemblies, a worker's cache of images and collectible
/// load contexts, the allow-list, and the report of a remote failure.
/// </summary>
public sealed class ShippingTests
{
    private const string JobsAssembly = "CspNet.Remote.TestJobs";

    [Fact]
    public void Pack_ProcessOfOwnAssembly_ShipsThatAssemblyButNotCspNetOrTheFramework()
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(3));

        Assert.Equal(typeof(StateJob).FullName, job.TypeName);
        Assert.Equal(JobsAssembly, job.AssemblyName);
        ShippedAssembly jobs = Assert.Single(job.Assemblies);
        Assert.Equal(JobsAssembly, jobs.Name);
        Assert.Equal(ProcessPacker.Sha256Of(File.ReadAllBytes(typeof(StateJob).Assembly.Location)), jobs.Sha256);
        Assert.DoesNotContain(job.Assemblies, a => a.Name is "CspNet" or "CspNet.Remote" or "System.Private.CoreLib");
    }

    [Fact]
    public void Instantiate_ShippedProcess_RunsInACollectibleContextWithEveryFieldIntact()
    {
        var original = new StateJob(7);
        ShippedProcess job = ProcessPacker.Pack(original);
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        SendMissing(cache, job);

        using ProcessLease lease = cache.Instantiate(job);
        lease.Process.Run();

        Type shippedType = lease.Process.GetType();
        Assert.NotSame(typeof(StateJob), shippedType);
        Assert.Equal(typeof(StateJob).FullName, shippedType.FullName);
        Assert.True(AssemblyLoadContext.GetLoadContext(shippedType.Assembly)!.IsCollectible);
        string remote = (string)shippedType.GetProperty(nameof(StateJob.Result))!.GetValue(lease.Process)!;
        Assert.Equal(original.Describe().Replace("|here|", "|(not shipped)|", StringComparison.Ordinal), remote);
    }

    [Fact]
    public void Missing_ImagesAdded_ListsNothing()
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(1));
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        Assert.Equal(job.Assemblies, cache.Missing(job.Assemblies));

        SendMissing(cache, job);

        Assert.Empty(cache.Missing(job.Assemblies));
    }

    [Fact]
    public void Missing_HostAssembly_NeverAsked()
    {
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));

        Assert.Empty(cache.Missing([new ShippedAssembly("CspNet", new string('0', 64)), new ShippedAssembly("System.Runtime", new string('1', 64))]));
    }

    [Fact]
    public void Add_TamperedImage_RefusedAsHashMismatch()
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(1));
        ShippedAssembly assembly = job.Assemblies[0];
        byte[] image = ProcessPacker.ReadImage(assembly);
        image[image.Length / 2] ^= 0x5A;
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));

        ShippingRefusedException refused = Assert.Throws<ShippingRefusedException>(() => cache.Add(assembly, image));

        Assert.Equal(ShippingRefusal.HashMismatch, refused.Reason);
        Assert.Contains(assembly.Sha256, refused.Message, StringComparison.Ordinal);
        Assert.Equal(job.Assemblies, cache.Missing(job.Assemblies));
    }

    [Fact]
    public void Instantiate_ImagesNotSent_RefusedAsAssemblyMissing()
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(1));
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));

        ShippingRefusedException refused = Assert.Throws<ShippingRefusedException>(() => cache.Instantiate(job));

        Assert.Equal(ShippingRefusal.AssemblyMissing, refused.Reason);
        Assert.Contains(JobsAssembly, refused.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("System.IO.FileInfo", "System.Private.CoreLib")]
    [InlineData("System.Diagnostics.Process", "System.Diagnostics.Process")]
    [InlineData("System.IO.FileInfo", JobsAssembly)]
    [InlineData("CspNet.Remote.TestJobs.Shape", JobsAssembly)]
    public void Instantiate_JobNamingATypeThatIsNotAShippedProcess_RefusedAsNotAllowed(string typeName, string assemblyName)
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(1)) with { TypeName = typeName, AssemblyName = assemblyName };
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        SendMissing(cache, job);

        ShippingRefusedException refused = Assert.Throws<ShippingRefusedException>(() => cache.Instantiate(job));

        Assert.Equal(ShippingRefusal.TypeNotAllowed, refused.Reason);
        Assert.Contains(typeName, refused.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("System.Private.CoreLib:System.IO.FileInfo")]
    [InlineData(":System.IO.FileInfo")]
    [InlineData(":System.Diagnostics.Process")]
    [InlineData("System.Diagnostics.Process:System.Diagnostics.Process")]
    [InlineData("CspNet:CspNet.One2OneChannel`1")]
    public void Instantiate_StateNamingATypeOutsideTheAllowList_RefusedAsNotAllowed(string typeName)
    {
        ShippedProcess job = ProcessPacker.Pack(new ObjectJob(new Circle())) with { State = ObjectJobState(typeName) };
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        SendMissing(cache, job);

        ShippingRefusedException refused = Assert.Throws<ShippingRefusedException>(() => cache.Instantiate(job));

        Assert.Equal(ShippingRefusal.TypeNotAllowed, refused.Reason);
    }

    [Fact]
    public void Instantiate_StateNamingAnAllowedShippedType_Accepted()
    {
        ShippedProcess job = ProcessPacker.Pack(new ObjectJob(new Circle { Radius = 4 }));
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        SendMissing(cache, job);

        using ProcessLease lease = cache.Instantiate(job);

        object payload = lease.Process.GetType().GetProperty(nameof(ObjectJob.Payload))!.GetValue(lease.Process)!;
        Assert.Equal(typeof(Circle).FullName, payload.GetType().FullName);
        Assert.Equal(4.0, payload.GetType().GetField(nameof(Circle.Radius))!.GetValue(payload));
    }

    [Theory]
    [InlineData(new byte[] { })]
    [InlineData(new byte[] { 0xC1 })]
    [InlineData(new byte[] { 0x91 })]
    [InlineData(new byte[] { 0x92, 0xC0, 0xC0 })]
    [InlineData(new byte[] { 0x91, 0x92, 0xA3, 0x61, 0x62 })]
    [InlineData(new byte[] { 0x91, 0x92, 0xC0, 0xDD, 0x3B, 0x9A, 0xCA, 0x00 })]
    public void Instantiate_MalformedState_RefusedAsMalformed(byte[] state)
    {
        ShippedProcess job = ProcessPacker.Pack(new ObjectJob(new Circle())) with { State = state };
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        SendMissing(cache, job);

        ShippingRefusedException refused = Assert.Throws<ShippingRefusedException>(() => cache.Instantiate(job));

        Assert.True(refused.Reason is ShippingRefusal.MalformedState or ShippingRefusal.TypeNotAllowed, refused.Reason + ": " + refused.Message);
    }

    [Fact]
    public void Instantiate_StateWithBytesAfterTheFields_RefusedAsMalformed()
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(2));
        job = job with { State = [.. job.State, 0x01] };
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        SendMissing(cache, job);

        ShippingRefusedException refused = Assert.Throws<ShippingRefusedException>(() => cache.Instantiate(job));

        Assert.Equal(ShippingRefusal.MalformedState, refused.Reason);
    }

    [Fact]
    public void Pack_FieldOfAFrameworkTypeOutsideTheAllowList_ThrowsNamingTheField()
    {
        ArgumentException thrown = Assert.Throws<ArgumentException>(() => ProcessPacker.Pack(new FileJob(null)));

        Assert.Contains("FileJob.file", thrown.Message, StringComparison.Ordinal);
        Assert.Contains("allow-list", thrown.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Pack_ChannelEndField_ThrowsSayingToGetNamedChannelsInsideRun()
    {
        var channel = new One2OneChannel<int>();

        ArgumentException thrown = Assert.Throws<ArgumentException>(() => ProcessPacker.Pack(new ChannelJob(channel.Out)));

        Assert.Contains("ChannelJob.output", thrown.Message, StringComparison.Ordinal);
        Assert.Contains("inside Run()", thrown.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Pack_DelegateField_ThrowsNamingTheField()
    {
        ArgumentException thrown = Assert.Throws<ArgumentException>(() => ProcessPacker.Pack(new DelegateJob(() => 1)));

        Assert.Contains("DelegateJob.compute", thrown.Message, StringComparison.Ordinal);
        Assert.Contains("delegate", thrown.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Pack_StateWithACycle_ThrowsSayingItMustBeATree()
    {
        ArgumentException thrown = Assert.Throws<ArgumentException>(() => ProcessPacker.Pack(new CycleJob()));

        Assert.Contains("cycle", thrown.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Pack_ObjectFieldHoldingADisallowedValue_ThrowsNamingTheField()
    {
        ArgumentException thrown = Assert.Throws<ArgumentException>(() => ProcessPacker.Pack(new ObjectJob(new FileInfo("x"))));

        Assert.Contains("ObjectJob.payload", thrown.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Instantiate_JobsOfTheSameAssemblies_ShareOneContext()
    {
        ShippedProcess first = ProcessPacker.Pack(new StateJob(1));
        ShippedProcess second = ProcessPacker.Pack(new FailingJob("x"));
        using var cache = new ShippedCodeCache(TimeSpan.FromMinutes(5));
        SendMissing(cache, first);

        using ProcessLease a = cache.Instantiate(first);
        using ProcessLease b = cache.Instantiate(second);

        Assert.Same(a.Process.GetType().Assembly, b.Process.GetType().Assembly);
        Assert.Equal(1, cache.ContextCount);
    }

    [Fact(Timeout = 30_000)]
    public async Task Dispose_LastLeaseOfAContext_UnloadsItWhenIdle()
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(1));
        using var cache = new ShippedCodeCache(TimeSpan.FromMilliseconds(20));
        var unloaded = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        cache.Unloaded += key => unloaded.TrySetResult(key);
        SendMissing(cache, job);

        ProcessLease lease = cache.Instantiate(job);
        lease.Process.Run();
        Assert.Equal(1, cache.ContextCount);
        lease.Dispose();
        lease.Dispose();

        Assert.Equal(job.Assemblies[0].Sha256, await unloaded.Task);
        Assert.Equal(0, cache.ContextCount);
        Assert.Empty(cache.Missing(job.Assemblies));
        using ProcessLease again = cache.Instantiate(job);
        Assert.Equal(1, cache.ContextCount);
    }

    [Fact]
    public void Instantiate_WhileAnotherLeaseRuns_ContextIsNotUnloaded()
    {
        ShippedProcess job = ProcessPacker.Pack(new StateJob(1));
        using var cache = new ShippedCodeCache(TimeSpan.Zero);
        SendMissing(cache, job);
        ProcessLease running = cache.Instantiate(job);

        cache.Instantiate(job).Dispose();

        Assert.Equal(1, cache.ContextCount);
        running.Process.Run();
        running.Dispose();
    }

    [Fact]
    public void From_ExceptionWithInner_TravelsAsRemoteProcessExceptionWithTypeMessageAndStack()
    {
        Exception thrown = Assert.ThrowsAny<Exception>(() => new FailingJob("why").Run());

        RemoteProcessException remote = ProcessFailure.From(thrown).ToException();

        Assert.Equal(typeof(InvalidOperationException).FullName, remote.RemoteTypeName);
        Assert.Equal("outer: why", remote.Message);
        Assert.Contains(nameof(FailingJob.Run), remote.RemoteStackTrace, StringComparison.Ordinal);
        RemoteProcessException inner = Assert.IsType<RemoteProcessException>(remote.InnerException);
        Assert.Equal(typeof(ArgumentException).FullName, inner.RemoteTypeName);
        Assert.Equal("inner: why", inner.Message);
        Assert.Contains("remote System.InvalidOperationException", remote.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void From_DeepChainOfInnerExceptions_IsCut()
    {
        Exception exception = new InvalidOperationException("0");
        for (int i = 1; i < 20; i++)
        {
            exception = new InvalidOperationException(i.ToString(System.Globalization.CultureInfo.InvariantCulture), exception);
        }

        ProcessFailure failure = ProcessFailure.From(exception);

        int depth = 0;
        for (ProcessFailure? f = failure; f is not null; f = f.Inner)
        {
            depth++;
        }

        Assert.Equal(ProcessFailure.MaxDepth + 1, depth);
    }

    private static void SendMissing(ShippedCodeCache cache, ShippedProcess job)
    {
        foreach (ShippedAssembly assembly in cache.Missing(job.Assemblies))
        {
            cache.Add(assembly, ProcessPacker.ReadImage(assembly));
        }
    }

    // ObjectJob's state with its one field (declared object) naming typeName, and an empty body.
    private static byte[] ObjectJobState(string typeName)
    {
        var buffer = new ArrayBufferWriter<byte>();
        var writer = new MessagePackWriter(buffer);
        writer.WriteArrayHeader(1);
        writer.WriteArrayHeader(2);
        writer.Write(typeName);
        writer.WriteArrayHeader(0);
        writer.Flush();
        return buffer.WrittenSpan.ToArray();
    }
}
