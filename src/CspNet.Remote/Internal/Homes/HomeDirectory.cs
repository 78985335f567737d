using System;
using System.Collections.Generic;
using System.Diagnostics.CodeAnalysis;
using System.Threading;
using System.Threading.Tasks;
using CspNet.Remote.Internal.Naming;
using CspNet.Remote.Internal.Transport;
using CspNet.Remote.NameServer;

namespace CspNet.Remote.Internal.Homes;

/// <summary>
/// The named constructs this program hosts, by name, and the getters waiting for a name that does
/// not exist yet. Stand-alone programs use it alone; distributed ones use it to find constructs
/// they host themselves (at the core's speed) and to serve other programs' attaches.
/// </summary>
/// <remarks>Thread-safe: one lock; waiters are completed outside it.</remarks>
internal sealed class HomeDirectory
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, Home> _homes = new(StringComparer.Ordinal);
    private readonly Dictionary<string, TaskCompletionSource<Home>> _waiting = new(StringComparer.Ordinal);

    internal bool TryGetValue(string name, [NotNullWhen(true)] out Home? home)
    {
        lock (_lock)
        {
            return _homes.TryGetValue(name, out home);
        }
    }

    /// <summary>
    /// Adds the home <paramref name="create"/> makes, or returns the existing one when the kind joins
    /// existing constructs (<paramref name="joinExisting"/>); otherwise an existing name is an error.
    /// </summary>
    internal (Home Home, bool Created) AddOrJoin(string name, Func<Home> create, bool joinExisting)
    {
        TaskCompletionSource<Home>? waiting;
        Home home;
        lock (_lock)
        {
            if (_homes.TryGetValue(name, out Home? existing))
            {
                return joinExisting ? (existing, false) : throw AlreadyExists(existing);
            }

            home = create();
            _homes.Add(name, home);
            _waiting.Remove(name, out waiting);
        }

        waiting?.TrySetResult(home);
        return (home, true);
    }

    /// <summary>The constructs hosted here now.</summary>
    internal Home[] Snapshot()
    {
        lock (_lock)
        {
            return [.. _homes.Values];
        }
    }

    internal void Remove(Home home)
    {
        lock (_lock)
        {
            if (_homes.TryGetValue(home.Name, out Home? current) && ReferenceEquals(current, home))
            {
                _homes.Remove(home.Name);
            }
        }
    }

    /// <summary>Waits until a construct of that name is hosted here.</summary>
    internal Task<Home> WaitAsync(string name, CancellationToken cancellationToken)
    {
        lock (_lock)
        {
            if (_homes.TryGetValue(name, out Home? home))
            {
                return Task.FromResult(home);
            }

            if (!_waiting.TryGetValue(name, out TaskCompletionSource<Home>? waiting))
            {
                _waiting.Add(name, waiting = new TaskCompletionSource<Home>(TaskCreationOptions.RunContinuationsAsynchronously));
            }

            return waiting.Task.WaitAsync(cancellationToken);
        }
    }

    private static NameAlreadyRegisteredException AlreadyExists(Home existing) =>
        new($"{Capitalized(NameRules.WithArticle(existing.Kind.WireName()))} named '{existing.Name}' already exists in this program. Names are unique: " +
            (existing.Kind.CreatedBy(reader: true) && existing.Kind != NameKind.Barrier
                ? "get the other end, or choose another name."
                : "join it (the getter without creation arguments), or choose another name."));

    private static string Capitalized(string text) => char.ToUpperInvariant(text[0]) + text[1..];
}
