using System;

namespace CspNet.Remote.NameServer;

/// <summary>A name is already registered by a program; the message says where it lives.</summary>
/// <remarks>The NameServer answers this with the gRPC status <c>ALREADY_EXISTS</c>.</remarks>
public sealed class NameAlreadyRegisteredException : InvalidOperationException
{
    /// <summary>Creates the exception with a default message.</summary>
    public NameAlreadyRegisteredException()
        : base("The name is already registered.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">What happened.</param>
    public NameAlreadyRegisteredException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and the exception that caused it.</summary>
    /// <param name="message">What happened.</param>
    /// <param name="innerException">The cause.</param>
    public NameAlreadyRegisteredException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Creates the exception for a name that <paramref name="existing"/> holds.</summary>
    /// <param name="existing">The registered entry.</param>
    /// <param name="ownerProgram">The label of the program that registered it.</param>
    public NameAlreadyRegisteredException(NameEntry existing, string ownerProgram)
        : base(Describe(existing, ownerProgram))
    {
        Existing = existing;
        OwnerProgram = ownerProgram;
    }

    /// <summary>The registered entry, when known (a client only sees the server's message).</summary>
    public NameEntry? Existing { get; }

    /// <summary>The label of the program that holds the name, when known.</summary>
    public string? OwnerProgram { get; }

    private static string Describe(NameEntry existing, string ownerProgram)
    {
        ArgumentNullException.ThrowIfNull(existing);
        return $"The name '{existing.Name}' is already registered as {existing.Kind} by program '{ownerProgram}' at {existing.Endpoint} (incarnation {existing.Incarnation}).";
    }
}
