using CspNet.Remote.NameServer;

namespace CspNet.NameServer;

/// <summary>The outcome of <see cref="INameRegistry.RegisterAsync"/>.</summary>
/// <param name="Entry">The registered entry, or the existing one when <paramref name="Created"/> is false.</param>
/// <param name="Created">Whether this call registered the name.</param>
public sealed record NameRegistration(NameEntry Entry, bool Created);
