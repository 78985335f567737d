namespace CspNet.Internal;

/// <summary>Who may use a channel's ends: the one thing that tells the four channel kinds apart.</summary>
internal enum ChannelShape : byte
{
    One2One,
    Any2One,
    One2Any,
    Any2Any,
}

/// <summary>What a <see cref="ChannelShape"/> means for the engine.</summary>
internal static class ChannelShapes
{
    internal static bool HasSingleReader(this ChannelShape shape) => shape is ChannelShape.One2One or ChannelShape.Any2One;

    internal static bool HasSingleWriter(this ChannelShape shape) => shape is ChannelShape.One2One or ChannelShape.One2Any;

    /// <summary>The public class name, for messages: a literal, shared by every channel of the kind.</summary>
    internal static string ClassName(this ChannelShape shape) => shape switch
    {
        ChannelShape.One2One => "One2OneChannel",
        ChannelShape.Any2One => "Any2OneChannel",
        ChannelShape.One2Any => "One2AnyChannel",
        _ => "Any2AnyChannel",
    };
}
