using System;
using System.Reflection;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>Picks the built-in codec of a type (the order is documented in docs/SERIALIZATION.md).</summary>
internal static class BuiltInCodecs
{
    /// <summary>Builds the codec of <typeparamref name="T"/>.</summary>
    /// <exception cref="NotSupportedException">The type cannot cross between programs.</exception>
    public static ValueCodec<T> Create<T>()
    {
        Type type = typeof(T);
        object? fixedCodec = FixedCodec(type);
        if (fixedCodec is not null)
        {
            return (ValueCodec<T>)fixedCodec;
        }

        if (Nullable.GetUnderlyingType(type) is { } underlying)
        {
            return CreateGeneric<T>(nameof(CreateNullable), underlying);
        }

        // Local-state types first: a Stream or a channel end must be refused with its own reason
        // even though System.Text.Json could serialize its public properties.
        CrossingRules.ThrowIfLocal(type);
        if (ProtobufCodecs.MessageType(type) is { } message)
        {
            return CreateGeneric<T>(nameof(CreateProtobuf), message);
        }

        CrossingRules.ThrowIfJsonCannotCarry(type);
        return new JsonCodec<T>();
    }

    // One instance per type is enough: CodecCache keeps it.
    private static object? FixedCodec(Type type) => Type.GetTypeCode(type) switch
    {
        // GetTypeCode maps enums to their underlying type; enums are left to JSON (by name of
        // type on the wire), so only the exact primitive types match here.
        _ when type.IsEnum => null,
        TypeCode.Boolean => new BoolCodec(),
        TypeCode.Int32 => new LittleEndianCodec<int, int>("int32"),
        TypeCode.Int64 => new LittleEndianCodec<long, long>("int64"),
        TypeCode.UInt32 => new LittleEndianCodec<uint, uint>("uint32"),
        TypeCode.UInt64 => new LittleEndianCodec<ulong, ulong>("uint64"),
        TypeCode.Single => new LittleEndianCodec<float, uint>("float"),
        TypeCode.Double => new LittleEndianCodec<double, ulong>("double"),
        TypeCode.String => new StringCodec(),
        _ when type == typeof(byte[]) => new BytesCodec(),
        _ => null,
    };

    private static ValueCodec<T> CreateGeneric<T>(string factory, Type argument)
    {
        // DoNotWrapExceptions: a NotSupportedException from the inner type's codec must reach the
        // caller as itself, not inside a TargetInvocationException.
        MethodInfo method = typeof(BuiltInCodecs)
            .GetMethod(factory, BindingFlags.NonPublic | BindingFlags.Static)!
            .MakeGenericMethod(argument);
        return (ValueCodec<T>)method.Invoke(null, BindingFlags.DoNotWrapExceptions, null, null, null)!;
    }

    private static NullableCodec<TValue> CreateNullable<TValue>()
        where TValue : struct => new NullableCodec<TValue>(ValueCodec<TValue>.Get());

    private static ProtobufCodec<TMessage> CreateProtobuf<TMessage>()
        where TMessage : class, Google.Protobuf.IMessage<TMessage> => new ProtobufCodec<TMessage>();
}
