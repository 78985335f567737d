using System;
using System.Threading;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>The one codec per type, and the registration that may replace the built-in one.</summary>
/// <typeparam name="T">The value type.</typeparam>
internal static class CodecCache<T>
{
    // Registration and first resolution race only at start-up; a lock keeps "registered after
    // first use" exact without making the hot path (a volatile read) pay for it.
    private static readonly Lock s_gate = new();
    private static volatile ValueCodec<T>? s_codec;
    private static ICspCodec<T>? s_registered;

    /// <summary>The codec, resolved once; failures are not cached, so a later registration can still fix them.</summary>
    public static ValueCodec<T> Get() => s_codec ?? Resolve();

    /// <summary>See <see cref="CspSerializers.Register{T}"/>.</summary>
    public static void Register(ICspCodec<T> codec)
    {
        lock (s_gate)
        {
            if (s_codec is not null)
            {
                throw new InvalidOperationException(
                    $"Values of {WireTypeNames.Of(typeof(T))} already use the codec \"{s_codec.WireName}\" in this program, "
                    + "so another codec cannot be registered now: values already exchanged, and the programs that "
                    + "attached with that encoding, would disagree with the new one. Register codecs at start-up, "
                    + "before any remote channel of the type is opened, in every program that uses the type.");
            }

            if (s_registered is not null)
            {
                throw new InvalidOperationException(
                    $"A codec (\"{s_registered.WireName}\") is already registered for {WireTypeNames.Of(typeof(T))}; "
                    + "register one codec per type.");
            }

            s_registered = codec;
        }
    }

    private static ValueCodec<T> Resolve()
    {
        lock (s_gate)
        {
            // A builder that throws leaves s_codec null: the type stays unused and registrable.
            return s_codec ??= s_registered is null ? BuiltInCodecs.Create<T>() : new RegisteredCodec<T>(s_registered);
        }
    }
}
