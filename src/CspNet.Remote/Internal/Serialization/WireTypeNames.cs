using System;
using System.Linq;
using System.Text;

namespace CspNet.Remote.Internal.Serialization;

/// <summary>
/// The type names in "json:" wire names: like <see cref="Type.FullName"/>, without the assembly
/// names and versions that FullName puts in generic arguments, so that two programs built against
/// different runtime versions still agree.
/// </summary>
/// <remarks>
/// <c>Ns.Outer+Nested</c>; generic <c>Ns.Pair`2[System.Int32,System.String]</c>; arrays
/// <c>System.Int32[]</c>, <c>System.Int32[,]</c>. The same text as <see cref="Type.ToString"/>
/// gives for such types, spelled out here so the format is ours (docs/SERIALIZATION.md).
/// </remarks>
internal static class WireTypeNames
{
    /// <summary>The wire spelling of <paramref name="type"/>.</summary>
    public static string Of(Type type) => Append(new StringBuilder(), type).ToString();

    private static StringBuilder Append(StringBuilder text, Type type)
    {
        if (type.IsArray)
        {
            Append(text, type.GetElementType()!);
            return type.IsSZArray ? text.Append("[]") : text.Append('[').Append(',', type.GetArrayRank() - 1).Append(']');
        }

        if (!type.IsGenericType || type.IsGenericTypeDefinition)
        {
            return text.Append(type.FullName ?? type.Name);
        }

        text.Append(type.GetGenericTypeDefinition().FullName).Append('[');
        foreach ((Type argument, int index) in type.GenericTypeArguments.Select((argument, index) => (argument, index)))
        {
            if (index > 0)
            {
                text.Append(',');
            }

            Append(text, argument);
        }

        return text.Append(']');
    }
}
