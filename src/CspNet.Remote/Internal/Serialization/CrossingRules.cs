using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using System.Threading;
using System.Threading.Tasks;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>
/// Which types may cross between programs, decided when a codec is first asked for, so that a
/// program learns it at the line that names the type rather than at its first remote write.
/// </summary>
internal static class CrossingRules
{
    private const string SendInstead =
        " Send data instead (a protobuf message, or a record, class or struct of primitives, strings and "
        + "collections), or register a codec for the type with CspSerializers.Register in every program that uses it.";

    /// <summary>Refuses types whose values are bound to this program: delegates, pointers, tasks, streams, ...</summary>
    /// <exception cref="NotSupportedException">The type is one of them (the message names it and says why).</exception>
    public static void ThrowIfLocal(Type type)
    {
        if (LocalStateReason(type) is { } why)
        {
            throw Refuse(type, why);
        }
    }

    /// <summary>
    /// Refuses types System.Text.Json cannot write and read back: no usable constructor,
    /// interfaces without a polymorphism setup, <see cref="object"/>, unsupported dictionary keys,
    /// or any of these (or a local-state type) anywhere among the members, elements and keys.
    /// </summary>
    /// <exception cref="NotSupportedException">The type cannot be carried as JSON.</exception>
    public static void ThrowIfJsonCannotCarry(Type type)
    {
        if (JsonReason(type, "$", []) is { } why)
        {
            throw Refuse(type, why);
        }
    }

    private static NotSupportedException Refuse(Type type, string why) =>
        new($"Values of type {WireTypeNames.Of(type)} cannot cross between programs: {why}{SendInstead}");

    private static string? LocalStateReason(Type type)
    {
        if (type.ContainsGenericParameters)
        {
            return "it is an open generic type; name a closed one, such as List<int> rather than List<T>.";
        }

        if (type.IsPointer || type.IsFunctionPointer || type.IsByRef || type == typeof(IntPtr) || type == typeof(UIntPtr)
            || typeof(SafeHandle).IsAssignableFrom(type))
        {
            return "pointers, references and handles are addresses in this program's memory or handle table, "
                + "meaningless in another program.";
        }

        if (type.IsByRefLike)
        {
            return "by-ref-like types (Span<T>, ref structs) live only on this program's stack; send an array or a string.";
        }

        if (typeof(Delegate).IsAssignableFrom(type))
        {
            return "delegates are code bound to this program's objects.";
        }

        if (typeof(Task).IsAssignableFrom(type) || type == typeof(ValueTask)
            || (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(ValueTask<>)))
        {
            return "a task is an operation running in this program; await it and send its result.";
        }

        if (typeof(WaitHandle).IsAssignableFrom(type) || IsInNamespace(type, "System.Threading"))
        {
            return "threads, locks, wait handles, cancellation tokens and other threading types coordinate work "
                + "inside one program; across programs, use named CspNet channels, barriers and buckets.";
        }

        if (typeof(Stream).IsAssignableFrom(type))
        {
            return "a stream is an open file, socket or buffer of this program; send its bytes (byte[]).";
        }

        if (typeof(Exception).IsAssignableFrom(type))
        {
            return "exceptions carry a stack trace, an inner exception and state that cannot be rebuilt elsewhere; "
                + "send a record describing the error.";
        }

        if (typeof(MemberInfo).IsAssignableFrom(type) || IsInNamespace(type, "System.Reflection"))
        {
            return "reflection objects describe this program's loaded code; send a name instead.";
        }

        if (IsCspConstruct(type))
        {
            return "CspNet channels, channel ends, guards, alternatives, barriers, buckets and processes belong to "
                + "the program that created them; to share one, give it a name and open it by that name in each "
                + "program (CspNet.Remote).";
        }

        return null;
    }

    private static bool IsInNamespace(Type type, string prefix) =>
        type.Namespace is { } ns && (ns == prefix || ns.StartsWith(prefix + ".", StringComparison.Ordinal));

    private static bool IsCspConstruct(Type type)
    {
        Assembly assembly = type.Assembly;
        return assembly == typeof(CspNet.Barrier).Assembly
            || (assembly == typeof(CrossingRules).Assembly && ProtobufCodecs.MessageType(type) is null);
    }

    private static string? JsonReason(Type type, string path, HashSet<Type> visited)
    {
        if (LocalStateReason(type) is { } local)
        {
            return Nested(type, path, local);
        }

        if (type == typeof(object))
        {
            return Nested(type, path,
                "System.Object says nothing about the value's type, so the receiver could not rebuild it (it would "
                + "get a JsonElement); use a concrete type, or JsonElement for arbitrary JSON.");
        }

        if (path != "$" && ProtobufCodecs.MessageType(type) is not null)
        {
            return Nested(type, path,
                "a protobuf message crosses only as the whole value, not inside JSON (System.Text.Json does not "
                + "know its fields' encoding); send the message itself, or make the container a protobuf message.");
        }

        if (!visited.Add(type))
        {
            return null;
        }

        if (Nullable.GetUnderlyingType(type) is { } underlying)
        {
            // Nullable<T> has a converter of its own (kind None); its content is what matters.
            return JsonReason(underlying, path, visited);
        }

        JsonTypeInfo info;
        try
        {
            info = JsonCodecOptions.Options.GetTypeInfo(type);
        }
        catch (Exception e) when (e is NotSupportedException or InvalidOperationException or ArgumentException)
        {
            return Nested(type, path, "System.Text.Json cannot serialize it: " + e.Message);
        }

        return info.Kind switch
        {
            JsonTypeInfoKind.Object => ObjectReason(info, path, visited),
            JsonTypeInfoKind.Enumerable =>
                JsonReason(info.ElementType!, path + "[]", visited) ?? ProbeEmpty(info, "[]", path),
            JsonTypeInfoKind.Dictionary =>
                KeyReason(info.KeyType!, path)
                ?? JsonReason(info.ElementType!, path + "{}", visited)
                ?? ProbeEmpty(info, "{}", path),

            // Primitives, strings, enums, JsonElement and types with a [JsonConverter]: the
            // converter reads what it writes.
            _ => null,
        };
    }

    private static string? ObjectReason(JsonTypeInfo info, string path, HashSet<Type> visited)
    {
        Type type = info.Type;
        if (info.PolymorphismOptions is { } polymorphism)
        {
            foreach (JsonDerivedType derived in polymorphism.DerivedTypes)
            {
                if (JsonReason(derived.DerivedType, path, visited) is { } why)
                {
                    return why;
                }
            }
        }
        else if (type.IsInterface || type.IsAbstract)
        {
            return Nested(type, path,
                "it is an interface or abstract class without a JSON polymorphism setup, so the receiver would not "
                + "know which type to build; mark it [JsonPolymorphic] with one [JsonDerivedType] per implementation, "
                + "or use a concrete type.");
        }

        if (!type.IsInterface && !type.IsAbstract && ConstructorReason(info) is { } noConstructor)
        {
            return Nested(type, path, noConstructor);
        }

        foreach (JsonPropertyInfo property in info.Properties)
        {
            string name = (property.AttributeProvider as MemberInfo)?.Name ?? property.Name;
            if (JsonReason(property.PropertyType, path + "." + name, visited) is { } why)
            {
                return why;
            }
        }

        return null;
    }

    private static string? ConstructorReason(JsonTypeInfo info)
    {
        if (info.ConstructorAttributeProvider is not ConstructorInfo constructor)
        {
            return info.CreateObject is null
                ? "System.Text.Json has no constructor to rebuild it with: give it a public parameterless constructor, "
                    + "a single public constructor whose parameters match its properties (as a record has), or mark "
                    + "one [JsonConstructor]."
                : null;
        }

        // System.Text.Json binds each parameter to the member of the same name (ignoring case) and
        // the same type, and fails only when it first reads a value; check it now instead.
        foreach (ParameterInfo parameter in constructor.GetParameters())
        {
            bool bound = false;
            foreach (JsonPropertyInfo property in info.Properties)
            {
                string name = (property.AttributeProvider as MemberInfo)?.Name ?? property.Name;
                bound |= property.PropertyType == parameter.ParameterType
                    && string.Equals(name, parameter.Name, StringComparison.OrdinalIgnoreCase);
            }

            if (!bound)
            {
                return $"its constructor parameter '{parameter.Name}' ({WireTypeNames.Of(parameter.ParameterType)}) matches "
                    + "no public property or field of the same name and type, so System.Text.Json could not call it.";
            }
        }

        return null;
    }

    private static string? KeyReason(Type key, string path)
    {
        bool supported = key.IsEnum
            || Type.GetTypeCode(key) is not (TypeCode.Object or TypeCode.Empty or TypeCode.DBNull)
            || key == typeof(Guid) || key == typeof(DateTimeOffset) || key == typeof(DateOnly) || key == typeof(TimeOnly)
            || key == typeof(TimeSpan) || key == typeof(Half) || key == typeof(Int128) || key == typeof(UInt128)
            || key == typeof(Uri) || key == typeof(Version);
        return supported
            ? null
            : Nested(key, path + "{key}",
                "JSON object keys are strings, and System.Text.Json writes only strings, numbers, enums, Guid, dates, "
                + "times, Uri and Version as keys; use one of those, or a list of key-value records.");
    }

    private static string? ProbeEmpty(JsonTypeInfo info, string emptyJson, string path)
    {
        // Whether a collection type can be built (arrays, interfaces mapped to List<T> and
        // Dictionary<K, V>, immutable collections, or a public parameterless constructor) is
        // known only inside System.Text.Json; building an empty one is the public way to ask.
        try
        {
            _ = JsonSerializer.Deserialize(emptyJson, info);
            return null;
        }
        catch (Exception e) when (e is NotSupportedException or InvalidOperationException)
        {
            return Nested(info.Type, path, "System.Text.Json cannot build it: " + e.Message);
        }
    }

    private static string Nested(Type type, string path, string why) =>
        path == "$" ? why : $"it contains a {WireTypeNames.Of(type)} (at {path}), and {why}";
}
