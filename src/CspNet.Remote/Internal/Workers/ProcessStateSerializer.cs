using System;
using System.Buffers;
using System.Collections;
using System.Collections.Generic;
using System.Reflection;
using System.Runtime.CompilerServices;
using MessagePack;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// Writes and reads a process's state: every instance field, as <c>[Serializable]</c> promised in the
/// paper, in MessagePack's wire format (MessagePack's own writer and reader), with types decided by
/// the declared field types and checked against <see cref="StateTypes"/>.
/// </summary>
/// <remarks>
/// <para>
/// Why not MessagePack's object resolvers: they generate code in a non-collectible dynamic
/// assembly, which may not reference types from a collectible load context ("A non-collectible
/// assembly may not reference a collectible assembly"), and a worker loads shipped code in exactly
/// such a context so it can unload it. They also decide types by attributes, not by an allow-list.
/// So the object graph is walked by reflection here (process state is small; this is not the
/// data path of channels), and MessagePack supplies the encoding.
/// </para>
/// <para>
/// Layout: a class value is a 2-array [type name or nil, fields]; nil means "the declared type",
/// a name (see <see cref="StateTypes.NameOf"/>) is given when the value's type differs (a derived
/// class, or any value of a field declared <see cref="object"/> or as an interface). Fields are an
/// array in <see cref="StateTypes.FieldsOf"/> order: both sides have the very same assembly (its
/// SHA-256 is checked), so positions are stable. Structs are their field array. Constructors do not
/// run on the worker (fields are set directly), as with the paper's serializer. Shared references
/// are copied, and cycles are refused.
/// </para>
/// </remarks>
internal static class ProcessStateSerializer
{
    /// <summary>How deeply objects may nest.</summary>
    internal const int MaxDepth = 64;

    /// <summary>Serializes the fields of <paramref name="root"/>.</summary>
    /// <exception cref="ArgumentException">A field holds a value that cannot travel; the message names it and says what to do.</exception>
    internal static byte[] Serialize(object root, Func<Assembly, bool> isShipped)
    {
        var buffer = new ArrayBufferWriter<byte>();
        var writer = new MessagePackWriter(buffer);
        var context = new WriteContext(isShipped);
        WriteFields(ref writer, root.GetType(), root, context, root.GetType().Name, 0);
        writer.Flush();
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Creates a <paramref name="rootType"/> without running a constructor and fills its fields from <paramref name="state"/>.</summary>
    /// <exception cref="ShippingRefusedException">A type is not allowed, or the state is malformed.</exception>
    internal static object Deserialize(Type rootType, ReadOnlyMemory<byte> state, Func<Assembly, bool> isShipped, Func<string, Assembly?> shippedAssembly)
    {
        var reader = new MessagePackReader(state);
        var context = new ReadContext(isShipped, shippedAssembly);
        try
        {
            object root = RuntimeHelpers.GetUninitializedObject(rootType);
            ReadFields(ref reader, rootType, root, context, 0);
            if (!reader.End)
            {
                throw Malformed("bytes follow the process's fields");
            }

            return root;
        }
        catch (Exception e) when (e is MessagePackSerializationException or System.IO.EndOfStreamException or InvalidCastException or ArgumentException or OverflowException or FormatException)
        {
            throw Malformed(e.Message);
        }
    }

    private static ShippingRefusedException Malformed(string why) =>
        new(ShippingRefusal.MalformedState, $"The process's state does not decode as its type: {why}.");

    private static void WriteFields(ref MessagePackWriter writer, Type type, object value, WriteContext context, string path, int depth)
    {
        if (depth > MaxDepth)
        {
            throw new ArgumentException($"{path}: the process's state nests deeper than {MaxDepth} objects.");
        }

        if (!type.IsValueType && !context.Enter(value))
        {
            throw new ArgumentException($"{path}: the process's state refers back to an object it contains (a cycle); a shipped process's state must be a tree.");
        }

        FieldInfo[] fields = StateTypes.FieldsOf(type);
        writer.WriteArrayHeader(fields.Length);
        foreach (FieldInfo field in fields)
        {
            WriteValue(ref writer, field.FieldType, field.GetValue(value), context, $"{type.Name}.{field.Name}", depth + 1);
        }

        if (!type.IsValueType)
        {
            context.Leave(value);
        }
    }

    private static void WriteValue(ref MessagePackWriter writer, Type declared, object? value, WriteContext context, string path, int depth)
    {
        if (Nullable.GetUnderlyingType(declared) is { } underlying)
        {
            if (value is null)
            {
                writer.WriteNil();
            }
            else
            {
                WriteValue(ref writer, underlying, value, context, path, depth);
            }

            return;
        }

        if (declared.IsEnum)
        {
            WriteEnum(ref writer, declared, value!);
            return;
        }

        if (StateTypes.IsFrameworkLeaf(declared))
        {
            WriteLeaf(ref writer, value);
            return;
        }

        if (value is null)
        {
            writer.WriteNil();
            return;
        }

        if (declared.IsArray || declared.IsGenericType && declared.Assembly == typeof(object).Assembly && !declared.IsInterface)
        {
            WriteCollection(ref writer, declared, value, context, path, depth);
            return;
        }

        if (declared.IsValueType)
        {
            Check(declared, context, path);
            WriteFields(ref writer, declared, value, context, path, depth);
            return;
        }

        Type actual = value.GetType();
        if (actual != declared)
        {
            if (actual.IsGenericType && actual.Assembly == typeof(object).Assembly || actual.IsArray)
            {
                throw new ArgumentException($"{path} is declared as {declared.Name} and holds a {actual}: declare the field with that collection type, so its elements' types are known.");
            }
        }

        Check(actual, context, path);
        writer.WriteArrayHeader(2);
        if (actual == declared)
        {
            writer.WriteNil();
        }
        else
        {
            writer.Write(StateTypes.NameOf(actual));
        }

        if (StateTypes.IsFrameworkLeaf(actual))
        {
            WriteLeaf(ref writer, value);
        }
        else if (actual.IsEnum)
        {
            WriteEnum(ref writer, actual, value);
        }
        else
        {
            WriteFields(ref writer, actual, value, context, path, depth);
        }
    }

    private static void Check(Type type, WriteContext context, string path)
    {
        if (StateTypes.Check(type, context.IsShipped, path) is { } problem)
        {
            throw new ArgumentException(problem);
        }
    }

    private static void WriteEnum(ref MessagePackWriter writer, Type type, object value)
    {
        if (Type.GetTypeCode(Enum.GetUnderlyingType(type)) is TypeCode.UInt64)
        {
            writer.Write(Convert.ToUInt64(value, System.Globalization.CultureInfo.InvariantCulture));
        }
        else
        {
            writer.Write(Convert.ToInt64(value, System.Globalization.CultureInfo.InvariantCulture));
        }
    }

    private static void WriteLeaf(ref MessagePackWriter writer, object? value)
    {
        switch (value)
        {
            case null: writer.WriteNil(); break;
            case bool v: writer.Write(v); break;
            case char v: writer.Write(v); break;
            case sbyte v: writer.Write(v); break;
            case byte v: writer.Write(v); break;
            case short v: writer.Write(v); break;
            case ushort v: writer.Write(v); break;
            case int v: writer.Write(v); break;
            case uint v: writer.Write(v); break;
            case long v: writer.Write(v); break;
            case ulong v: writer.Write(v); break;
            case float v: writer.Write(v); break;
            case double v: writer.Write(v); break;
            case string v: writer.Write(v); break;
            case decimal v:
                Span<int> bits = stackalloc int[4];
                decimal.GetBits(v, bits);
                writer.WriteArrayHeader(4);
                foreach (int bit in bits)
                {
                    writer.Write(bit);
                }

                break;
            case DateTime v: writer.Write(v.ToBinary()); break;
            case DateTimeOffset v:
                writer.WriteArrayHeader(2);
                writer.Write(v.Ticks);
                writer.Write(v.Offset.Ticks);
                break;
            case TimeSpan v: writer.Write(v.Ticks); break;
            case Guid v:
                writer.Write(v.ToByteArray());
                break;
            default: throw new InvalidOperationException($"Not a leaf type: {value.GetType()}.");
        }
    }

    private static void WriteCollection(ref MessagePackWriter writer, Type declared, object value, WriteContext context, string path, int depth)
    {
        Check(declared, context, path);
        if (value.GetType() != declared)
        {
            throw new ArgumentException($"{path} is declared as {declared} and holds a {value.GetType()}: declare the field with the type it holds.");
        }

        if (value is byte[] bytes)
        {
            writer.Write(bytes);
            return;
        }

        if (declared.IsArray || declared.GetGenericTypeDefinition() != typeof(Dictionary<,>))
        {
            Type element = declared.IsArray ? declared.GetElementType()! : declared.GetGenericArguments()[0];
            // HashSet<T> has no non-generic ICollection: count what enumerating gives.
            var items = new List<object?>();
            foreach (object? item in (IEnumerable)value)
            {
                items.Add(item);
            }

            writer.WriteArrayHeader(items.Count);
            foreach (object? item in items)
            {
                WriteValue(ref writer, element, item, context, path + "[]", depth + 1);
            }

            return;
        }

        Type[] arguments = declared.GetGenericArguments();
        var map = (IDictionary)value;
        writer.WriteMapHeader(map.Count);
        foreach (DictionaryEntry entry in map)
        {
            WriteValue(ref writer, arguments[0], entry.Key, context, path + ".Key", depth + 1);
            WriteValue(ref writer, arguments[1], entry.Value, context, path + ".Value", depth + 1);
        }
    }

    private static void ReadFields(ref MessagePackReader reader, Type type, object target, ReadContext context, int depth)
    {
        if (depth > MaxDepth)
        {
            throw Malformed($"objects nest deeper than {MaxDepth}");
        }

        FieldInfo[] fields = StateTypes.FieldsOf(type);
        int count = reader.ReadArrayHeader();
        if (count != fields.Length)
        {
            throw Malformed($"{type.Name} has {fields.Length} fields, the state gives {count}");
        }

        foreach (FieldInfo field in fields)
        {
            field.SetValue(target, ReadValue(ref reader, field.FieldType, context, depth + 1));
        }
    }

    private static object? ReadValue(ref MessagePackReader reader, Type declared, ReadContext context, int depth)
    {
        if (Nullable.GetUnderlyingType(declared) is { } underlying)
        {
            return reader.TryReadNil() ? null : ReadValue(ref reader, underlying, context, depth);
        }

        if (declared.IsEnum)
        {
            return ReadEnum(ref reader, declared);
        }

        if (StateTypes.IsFrameworkLeaf(declared))
        {
            return ReadLeaf(ref reader, declared);
        }

        if (reader.TryReadNil())
        {
            return declared.IsValueType ? throw Malformed($"nil where a {declared.Name} was expected") : null;
        }

        if (declared.IsArray || declared.IsGenericType && declared.Assembly == typeof(object).Assembly && !declared.IsInterface)
        {
            return ReadCollection(ref reader, declared, context, depth);
        }

        if (declared.IsValueType)
        {
            object boxed = RuntimeHelpers.GetUninitializedObject(declared);
            ReadFields(ref reader, declared, boxed, context, depth);
            return boxed;
        }

        if (reader.ReadArrayHeader() != 2)
        {
            throw Malformed($"a {declared.Name} value is not a [type, fields] pair");
        }

        Type actual = reader.TryReadNil() ? declared : context.Resolve(reader.ReadString() ?? string.Empty, declared);
        if (actual.IsAbstract || actual.IsInterface)
        {
            throw Malformed($"{actual} cannot be instantiated");
        }

        if (StateTypes.IsFrameworkLeaf(actual))
        {
            return ReadLeaf(ref reader, actual);
        }

        if (actual.IsEnum)
        {
            return ReadEnum(ref reader, actual);
        }

        object value = RuntimeHelpers.GetUninitializedObject(actual);
        ReadFields(ref reader, actual, value, context, depth);
        return value;
    }

    private static object ReadEnum(ref MessagePackReader reader, Type type) =>
        Type.GetTypeCode(Enum.GetUnderlyingType(type)) is TypeCode.UInt64
            ? Enum.ToObject(type, reader.ReadUInt64())
            : Enum.ToObject(type, reader.ReadInt64());

    private static object? ReadLeaf(ref MessagePackReader reader, Type type)
    {
        if (type == typeof(string))
        {
            return reader.ReadString();
        }

        switch (Type.GetTypeCode(type))
        {
            case TypeCode.Boolean: return reader.ReadBoolean();
            case TypeCode.Char: return reader.ReadChar();
            case TypeCode.SByte: return reader.ReadSByte();
            case TypeCode.Byte: return reader.ReadByte();
            case TypeCode.Int16: return reader.ReadInt16();
            case TypeCode.UInt16: return reader.ReadUInt16();
            case TypeCode.Int32: return reader.ReadInt32();
            case TypeCode.UInt32: return reader.ReadUInt32();
            case TypeCode.Int64: return reader.ReadInt64();
            case TypeCode.UInt64: return reader.ReadUInt64();
            case TypeCode.Single: return reader.ReadSingle();
            case TypeCode.Double: return reader.ReadDouble();
            case TypeCode.DateTime: return DateTime.FromBinary(reader.ReadInt64());
            case TypeCode.Decimal:
                if (reader.ReadArrayHeader() != 4)
                {
                    throw Malformed("a decimal is not four integers");
                }

                return new decimal([reader.ReadInt32(), reader.ReadInt32(), reader.ReadInt32(), reader.ReadInt32()]);
        }

        if (type == typeof(DateTimeOffset))
        {
            if (reader.ReadArrayHeader() != 2)
            {
                throw Malformed("a DateTimeOffset is not [ticks, offset]");
            }

            long ticks = reader.ReadInt64();
            return new DateTimeOffset(ticks, TimeSpan.FromTicks(reader.ReadInt64()));
        }

        if (type == typeof(TimeSpan))
        {
            return TimeSpan.FromTicks(reader.ReadInt64());
        }

        ReadOnlySequence<byte> bytes = reader.ReadBytes() ?? throw Malformed("a Guid is nil");
        return bytes.Length == 16 ? new Guid(bytes.ToArray()) : throw Malformed("a Guid is not 16 bytes");
    }

    private static object ReadCollection(ref MessagePackReader reader, Type declared, ReadContext context, int depth)
    {
        context.Check(declared);
        if (declared == typeof(byte[]))
        {
            return (reader.ReadBytes() ?? throw Malformed("nil bytes inside a value")).ToArray();
        }

        if (declared.IsArray || declared.GetGenericTypeDefinition() != typeof(Dictionary<,>))
        {
            int count = CheckedCount(ref reader, reader.ReadArrayHeader());
            Type element = declared.IsArray ? declared.GetElementType()! : declared.GetGenericArguments()[0];
            if (declared.IsArray)
            {
                var array = Array.CreateInstance(element, count);
                for (int i = 0; i < count; i++)
                {
                    array.SetValue(ReadValue(ref reader, element, context, depth + 1), i);
                }

                return array;
            }

            object collection = Activator.CreateInstance(declared)!;
            MethodInfo add = declared.GetMethod("Add", [element])!;
            var argument = new object?[1];
            for (int i = 0; i < count; i++)
            {
                argument[0] = ReadValue(ref reader, element, context, depth + 1);
                add.Invoke(collection, argument);
            }

            return collection;
        }

        Type[] arguments = declared.GetGenericArguments();
        int entries = CheckedCount(ref reader, reader.ReadMapHeader());
        var map = (IDictionary)Activator.CreateInstance(declared)!;
        for (int i = 0; i < entries; i++)
        {
            object key = ReadValue(ref reader, arguments[0], context, depth + 1) ?? throw Malformed("a dictionary key is nil");
            map.Add(key, ReadValue(ref reader, arguments[1], context, depth + 1));
        }

        return map;
    }

    // Every element takes at least one byte: a count beyond what is left is a lie that would
    // otherwise allocate a huge array before failing.
    private static int CheckedCount(ref MessagePackReader reader, int count) =>
        count <= reader.Sequence.Length - reader.Consumed ? count : throw Malformed($"a count of {count} exceeds the bytes left");

    /// <summary>What a serialization in progress knows: the shipped test and the objects on the current path.</summary>
    private sealed class WriteContext(Func<Assembly, bool> isShipped)
    {
        private readonly HashSet<object> _path = new(ReferenceEqualityComparer.Instance);

        internal Func<Assembly, bool> IsShipped { get; } = isShipped;

        internal bool Enter(object value) => _path.Add(value);

        internal void Leave(object value) => _path.Remove(value);
    }

    /// <summary>What a deserialization in progress knows: which assemblies came with the job.</summary>
    private sealed class ReadContext(Func<Assembly, bool> isShipped, Func<string, Assembly?> shippedAssembly)
    {
        internal void Check(Type type)
        {
            if (StateTypes.Check(type, isShipped, type.Name) is { } problem)
            {
                throw new ShippingRefusedException(ShippingRefusal.TypeNotAllowed, problem);
            }
        }

        /// <summary>The type a payload names: a listed framework type or a type of a shipped assembly, allowed and assignable to <paramref name="declared"/>.</summary>
        internal Type Resolve(string name, Type declared)
        {
            int colon = name.IndexOf(':', StringComparison.Ordinal);
            string assemblyName = colon < 0 ? string.Empty : name[..colon];
            string fullName = colon < 0 ? name : name[(colon + 1)..];
            Type? type = assemblyName.Length == 0
                ? StateTypes.FrameworkType(fullName)
                : shippedAssembly(assemblyName)?.GetType(fullName, throwOnError: false);
            if (type is null)
            {
                throw new ShippingRefusedException(ShippingRefusal.TypeNotAllowed, $"The process's state names the type '{name}', which is neither a listed framework type nor a type of an assembly shipped with the job.");
            }

            Check(type);
            return declared.IsAssignableFrom(type) ? type : throw Malformed($"{type} is not a {declared}");
        }
    }
}
