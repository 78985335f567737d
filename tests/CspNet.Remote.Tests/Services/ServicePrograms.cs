namespace CspNet.Remote.Tests.Services;

/// <summary>
/// The test classes that publish or pack the service programs' build output run one after
/// another: `dotnet publish` and `dotnet pack` of one project write the same intermediate files.
/// </summary>
[CollectionDefinition(Name)]
public sealed class ServicePrograms
{
    internal const string Name = "Service programs";
}
