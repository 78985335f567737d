namespace CspNet;

/// <summary>
/// Getters for channels, as in CSP.NET. Anonymous channels are local to the program; the same
/// channels can also be created with <c>new</c>.
/// </summary>
public static class Factory
{
    /// <summary>Creates an unbuffered channel for one writer and one reader.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <returns>The channel.</returns>
    public static One2OneChannel<T> GetOne2One<T>() => new();

    /// <summary>Creates a buffered channel for one writer and one reader.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <param name="buffer">The channel's buffer.</param>
    /// <returns>The channel.</returns>
    public static One2OneChannel<T> GetOne2One<T>(IBuffer<T> buffer) => new(buffer);

    /// <summary>Creates an unbuffered channel for many writers and one reader.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <returns>The channel.</returns>
    public static Any2OneChannel<T> GetAny2One<T>() => new();

    /// <summary>Creates a buffered channel for many writers and one reader.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <param name="buffer">The channel's buffer.</param>
    /// <returns>The channel.</returns>
    public static Any2OneChannel<T> GetAny2One<T>(IBuffer<T> buffer) => new(buffer);

    /// <summary>Creates an unbuffered channel for one writer and many readers.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <returns>The channel.</returns>
    public static One2AnyChannel<T> GetOne2Any<T>() => new();

    /// <summary>Creates a buffered channel for one writer and many readers.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <param name="buffer">The channel's buffer.</param>
    /// <returns>The channel.</returns>
    public static One2AnyChannel<T> GetOne2Any<T>(IBuffer<T> buffer) => new(buffer);

    /// <summary>Creates an unbuffered channel for many writers and many readers.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <returns>The channel.</returns>
    public static Any2AnyChannel<T> GetAny2Any<T>() => new();

    /// <summary>Creates a buffered channel for many writers and many readers.</summary>
    /// <typeparam name="T">The type of the values carried.</typeparam>
    /// <param name="buffer">The channel's buffer.</param>
    /// <returns>The channel.</returns>
    public static Any2AnyChannel<T> GetAny2Any<T>(IBuffer<T> buffer) => new(buffer);
}
