using Xunit.Abstractions;
using Xunit.Sdk;

namespace CspNet.Remote.Tests.MultiHost;

/// <summary>A fact that needs a <see cref="NetworkNamespaceRig"/>: skipped, with the reason, where none can be built.</summary>
[XunitTestCaseDiscoverer("CspNet.Remote.Tests.MultiHost.NetnsFactDiscoverer", "CspNet.Remote.Tests")]
[AttributeUsage(AttributeTargets.Method)]
public sealed class NetnsFactAttribute : FactAttribute;

public sealed class NetnsFactDiscoverer(IMessageSink diagnosticMessageSink) : FactDiscoverer(diagnosticMessageSink)
{
    public override IEnumerable<IXunitTestCase> Discover(ITestFrameworkDiscoveryOptions discoveryOptions, ITestMethod testMethod, IAttributeInfo factAttribute) =>
        NetworkNamespaceRig.SkipReason is { } reason
            ? [new XunitSkippedDataRowTestCase(DiagnosticMessageSink, discoveryOptions.MethodDisplayOrDefault(), discoveryOptions.MethodDisplayOptionsOrDefault(), testMethod, reason)]
            : base.Discover(discoveryOptions, testMethod, factAttribute);
}

/// <summary>A theory that needs a <see cref="NetworkNamespaceRig"/>: skipped, with the reason, where none can be built.</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class NetnsTheoryAttribute : TheoryAttribute
{
    public NetnsTheoryAttribute()
    {
        Skip = NetworkNamespaceRig.SkipReason;
    }
}
