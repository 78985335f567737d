using System;
using System.Buffers;
using System.Reflection;
using Google.Protobuf;
using Google.Protobuf.Reflection;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>Recognises protobuf message types.</summary>
internal static class ProtobufCodecs
{
    /// <summary><paramref name="type"/> if it implements <c>IMessage&lt;itself&gt;</c>, else <see langword="null"/>.</summary>
    public static Type? MessageType(Type type)
    {
        // Not MakeGenericType(type): IMessage<T>'s constraint would make that throw for other types.
        foreach (Type contract in type.GetInterfaces())
        {
            if (contract.IsGenericType
                && contract.GetGenericTypeDefinition() == typeof(IMessage<>)
                && contract.GenericTypeArguments[0] == type)
            {
                return type;
            }
        }

        return null;
    }
}

/// <summary>"pb:&lt;full message name&gt;": the presence byte, then the protobuf binary encoding.</summary>
/// <typeparam name="TMessage">A generated protobuf message type.</typeparam>
internal sealed class ProtobufCodec<TMessage> : PresenceCodec<TMessage>
    where TMessage : class, IMessage<TMessage>
{
    private readonly MessageParser<TMessage> _parser;

    /// <summary>Finds the generated static <c>Parser</c> and <c>Descriptor</c> (once per type: the codec is cached).</summary>
    /// <exception cref="NotSupportedException">The type lacks them (hand-written, not generated).</exception>
    public ProtobufCodec()
    {
        const BindingFlags Static = BindingFlags.Public | BindingFlags.Static;
        if (typeof(TMessage).GetProperty("Parser", Static)?.GetValue(null) is not MessageParser<TMessage> parser
            || typeof(TMessage).GetProperty("Descriptor", Static)?.GetValue(null) is not MessageDescriptor descriptor)
        {
            throw new NotSupportedException(
                $"Values of type {WireTypeNames.Of(typeof(TMessage))} cannot cross between programs: it implements "
                + "Google.Protobuf.IMessage<T> but lacks the public static Parser and Descriptor properties that "
                + "protoc generates. Use a message generated from a .proto file, or register a codec with "
                + "CspSerializers.Register.");
        }

        _parser = parser;
        WireName = "pb:" + descriptor.FullName;
    }

    public override string WireName { get; }

    protected override void WritePresent(TMessage value, IBufferWriter<byte> output)
    {
        Presence.WritePresent(output);

        // Generated messages implement IBufferMessage: this writes straight into output's spans.
        value.WriteTo(output);
    }

    protected override TMessage ReadPresent(ReadOnlySequence<byte> input)
    {
        try
        {
            return _parser.ParseFrom(input);
        }
        catch (InvalidProtocolBufferException e)
        {
            throw WireErrors.Invalid(WireName, "its bytes are not a valid protobuf message: " + e.Message, e);
        }
    }
}
