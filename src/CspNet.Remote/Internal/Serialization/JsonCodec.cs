using System;
using System.Buffers;
using System.IO;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>The System.Text.Json settings of "json:" values; both programs must use the same.</summary>
internal static class JsonCodecOptions
{
    /// <summary>
    /// Reflection-based, read-only options: public properties and public fields (so value tuples
    /// and field-style structs keep their data instead of becoming <c>{}</c>), NaN and infinities
    /// allowed as <c>"NaN"</c>, <c>"Infinity"</c>, <c>"-Infinity"</c> (a double that crosses as a
    /// primitive may be NaN, so one inside a record may be too). Everything else is the
    /// System.Text.Json default: member names as declared, case-sensitive, unknown members skipped.
    /// </summary>
    public static readonly JsonSerializerOptions Options = CreateOptions();

    /// <summary>Writer settings: compact, and non-ASCII text as UTF-8 rather than \u escapes
    /// (the output never lands in HTML, which is what the default escaping guards against).</summary>
    public static readonly JsonWriterOptions WriterOptions = new()
    {
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        Indented = false,
    };

    private static JsonSerializerOptions CreateOptions()
    {
        JsonSerializerOptions options = new()
        {
            IncludeFields = true,
            NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
            TypeInfoResolver = new DefaultJsonTypeInfoResolver(),
        };
        options.MakeReadOnly();
        return options;
    }
}

/// <summary>"json:&lt;type name&gt;": the UTF-8 JSON text of the value; <see langword="null"/> is <c>null</c>.</summary>
/// <typeparam name="T">A type <see cref="CrossingRules.ThrowIfJsonCannotCarry"/> accepted.</typeparam>
internal sealed class JsonCodec<T> : ValueCodec<T>
{
    // Writers are reused per thread (a writer is a sizeable object and values are small and
    // frequent); taken out while in use, so that a converter that itself sends a value gets a
    // fresh one instead of corrupting ours.
    [ThreadStatic]
    private static Utf8JsonWriter? t_writer;

    private readonly JsonTypeInfo<T> _typeInfo =
        (JsonTypeInfo<T>)JsonCodecOptions.Options.GetTypeInfo(typeof(T));

    public override string WireName { get; } = "json:" + WireTypeNames.Of(typeof(T));

    public override void Write(T value, IBufferWriter<byte> output)
    {
        Utf8JsonWriter writer = t_writer ?? new Utf8JsonWriter(output, JsonCodecOptions.WriterOptions);
        t_writer = null;
        writer.Reset(output);
        try
        {
            JsonSerializer.Serialize(writer, value, _typeInfo);
            writer.Flush();
        }
        catch (Exception e) when (e is JsonException or NotSupportedException)
        {
            // A cycle, excessive depth, or a runtime subtype System.Text.Json cannot write:
            // the type passed the checks, this value did not.
            throw new ArgumentException(
                $"The {WireTypeNames.Of(typeof(T))} value cannot be written as JSON: {e.Message}", nameof(value), e);
        }
        finally
        {
            // Drop the reference to output, so the cached writer keeps no buffer alive.
            writer.Reset(Stream.Null);
            t_writer = writer;
        }
    }

    public override T Read(ReadOnlySequence<byte> input)
    {
        try
        {
            Utf8JsonReader reader = new(input);
            T? value = JsonSerializer.Deserialize(ref reader, _typeInfo);

            // Deserialize stops after one JSON value; anything but white space after it is
            // malformed, and Read throws on it.
            if (reader.Read())
            {
                throw WireErrors.Invalid(WireName, "more JSON follows the value");
            }

            // null is a valid value of a reference type; for value types the serializer has
            // already refused it.
            return value!;
        }
        catch (InvalidDataException)
        {
            throw;
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // JsonException for bad JSON, and whatever the type's own constructor or setters
            // throw for values they reject (ArgumentException, FormatException, ...): in every
            // case these bytes are not a valid value of the type.
            throw WireErrors.Invalid(WireName, e.Message, e);
        }
    }
}
