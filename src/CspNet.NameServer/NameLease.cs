using System;

namespace CspNet.NameServer;

/// <summary>A program's lease: the names it registers live as long as the lease.</summary>
/// <param name="Id">The opaque lease id; also the program's incarnation.</param>
/// <param name="TimeToLive">Renew well before this elapses (every third of it).</param>
public sealed record NameLease(string Id, TimeSpan TimeToLive);
