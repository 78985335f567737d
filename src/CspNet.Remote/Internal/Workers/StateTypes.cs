using System;
using System.Collections.Frozen;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace CspNet.Remote.Internal.Workers;

/// <summary>
/// The allow-list of a shipped process's state: which types may appear in it, what each field is,
/// and the names types travel under when a field's declared type does not say which type its value has.
/// </summary>
/// <remarks>
/// <para>
/// Allowed: the primitives, <see cref="string"/>, <see cref="decimal"/>, <see cref="DateTime"/>,
/// <see cref="DateTimeOffset"/>, <see cref="TimeSpan"/>, <see cref="Guid"/>, enums, one-dimensional
/// arrays, <see cref="Nullable{T}"/>, <see cref="List{T}"/>, <see cref="HashSet{T}"/> and
/// <see cref="Dictionary{TKey, TValue}"/> of allowed types, <see cref="object"/> and interfaces as
/// declared field types (the value's own type is then checked), and classes and structs defined in
/// the assemblies shipped with the job, whose instance fields are allowed in turn. Nothing else:
/// no framework type outside this list (a FileInfo, a Process, a delegate), no pointer, and no
/// CspNet construct (a channel end cannot travel: processes get named ones inside Run()).
/// </para>
/// <para>
/// Why an allow-list: a worker decodes bytes from the network into objects. Deciding the types
/// from the process's declared fields, and only ever naming shipped or listed types, means a payload
/// cannot make a worker build an object of a type with dangerous side effects (the class of attack
/// that retired BinaryFormatter). Metadata caches are keyed weakly by type, so they never keep a
/// shipped load context from unloading.
/// </para>
/// </remarks>
internal static class StateTypes
{
    private static readonly FrozenDictionary<string, Type> FrameworkByName = new[]
    {
        typeof(bool), typeof(char), typeof(sbyte), typeof(byte), typeof(short), typeof(ushort), typeof(int), typeof(uint),
        typeof(long), typeof(ulong), typeof(float), typeof(double), typeof(decimal), typeof(string),
        typeof(DateTime), typeof(DateTimeOffset), typeof(TimeSpan), typeof(Guid),
    }.ToFrozenDictionary(t => t.FullName!, StringComparer.Ordinal);

    private static readonly ConditionalWeakTable<Type, FieldInfo[]> FieldCache = new();

    /// <summary>The name a value's type travels under: "assembly:full name", or ":full name" for a listed framework type.</summary>
    internal static string NameOf(Type type) =>
        FrameworkByName.ContainsKey(type.FullName ?? string.Empty) && type.Assembly == typeof(object).Assembly
            ? ":" + type.FullName
            : type.Assembly.GetName().Name + ":" + type.FullName;

    /// <summary>The listed framework type named <paramref name="fullName"/>, or null.</summary>
    internal static Type? FrameworkType(string fullName) => FrameworkByName.GetValueOrDefault(fullName);

    /// <summary>Whether <paramref name="type"/> is a listed framework type (primitive-like leaf).</summary>
    internal static bool IsFrameworkLeaf(Type type) => FrameworkByName.TryGetValue(type.FullName ?? string.Empty, out Type? listed) && listed == type;

    /// <summary>The instance fields that travel, base class first, in metadata order; [NonSerialized] fields stay behind.</summary>
    internal static FieldInfo[] FieldsOf(Type type) => FieldCache.GetValue(type, static t =>
    {
        var levels = new List<Type>();
        for (Type? level = t; level is not null && level != typeof(object) && level != typeof(ValueType); level = level.BaseType)
        {
            levels.Add(level);
        }

        levels.Reverse();
        return levels
            .SelectMany(level => level.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly)
                .Where(f => !IsNonSerialized(f))
                .OrderBy(f => f.MetadataToken))
            .ToArray();
    });

    // [NonSerialized] is how the paper's [Serializable] processes mark fields that stay behind;
    // honouring the marker is not formatter-based serialization, whatever SYSLIB0050 says of it.
#pragma warning disable SYSLIB0050
    private static bool IsNonSerialized(FieldInfo field) => field.IsNotSerialized;
#pragma warning restore SYSLIB0050

    /// <summary>
    /// Checks that <paramref name="type"/> and every type its fields declare are allowed; returns null
    /// when they are, or a sentence saying which is not and what to do.
    /// </summary>
    /// <param name="type">The type to check.</param>
    /// <param name="isShipped">Whether an assembly travels with the job (sender) or came with it (worker).</param>
    /// <param name="path">Where the type was met, for the message (for example "MyProcess.results").</param>
    internal static string? Check(Type type, Func<Assembly, bool> isShipped, string path)
    {
        var visited = new HashSet<Type>();
        return CheckType(type, isShipped, path, visited);
    }

    private static string? CheckType(Type type, Func<Assembly, bool> isShipped, string path, HashSet<Type> visited)
    {
        if (!visited.Add(type))
        {
            return null; // a recursive type (a list node): its fields are being checked already
        }

        if (IsFrameworkLeaf(type) || type == typeof(object) || type.IsEnum && (type.Assembly == typeof(object).Assembly || isShipped(type.Assembly)))
        {
            return null;
        }

        if (type.IsPointer || type.IsByRef || type.IsByRefLike || type.IsFunctionPointer || type == typeof(IntPtr) || type == typeof(UIntPtr))
        {
            return $"{path} is a {type}: pointers cannot travel to another machine.";
        }

        if (typeof(Delegate).IsAssignableFrom(type))
        {
            return $"{path} is a delegate ({type}): code references cannot travel; keep what the delegate would compute as data, or compute it inside Run().";
        }

        if (type.IsArray)
        {
            return type.GetArrayRank() != 1
                ? $"{path} is a multi-dimensional array ({type}): use a one-dimensional array."
                : CheckType(type.GetElementType()!, isShipped, path + "[]", visited);
        }

        if (type.IsGenericType && !type.IsGenericTypeDefinition)
        {
            Type definition = type.GetGenericTypeDefinition();
            if (definition == typeof(Nullable<>) || definition == typeof(List<>) || definition == typeof(HashSet<>) || definition == typeof(Dictionary<,>))
            {
                foreach (Type argument in type.GetGenericArguments())
                {
                    if (CheckType(argument, isShipped, $"{path}<{argument.Name}>", visited) is { } problem)
                    {
                        return problem;
                    }
                }

                return null;
            }
        }

        if (type.Assembly == typeof(ICSPProcess).Assembly || type.Assembly == typeof(StateTypes).Assembly)
        {
            return $"{path} is a CspNet construct ({type}): channels, barriers and buckets cannot travel with a process. " +
                "Hold the construct's name in a string field and get the named construct inside Run() (for example Factory.GetOne2OneOut<T>(name)).";
        }

        if (type.IsInterface)
        {
            return isShipped(type.Assembly)
                ? null
                : $"{path} is declared as the framework interface {type}: declare the field with a concrete allowed type (List<T>, Dictionary<K,V>, an array, or a type of your own).";
        }

        if (!isShipped(type.Assembly))
        {
            return $"{path} is a {type} from {type.Assembly.GetName().Name}, which is not on a worker's allow-list " +
                "(primitives, string, decimal, DateTime, DateTimeOffset, TimeSpan, Guid, enums, arrays, List<T>, HashSet<T>, Dictionary<K,V>, Nullable<T>, and your own types). " +
                "Keep what you need of it in allowed fields, or create it inside Run().";
        }

        if (type.IsGenericType)
        {
            foreach (Type argument in type.GetGenericArguments())
            {
                if (CheckType(argument, isShipped, $"{path}<{argument.Name}>", visited) is { } problem)
                {
                    return problem;
                }
            }
        }

        for (Type? level = type.BaseType; level is not null && level != typeof(object) && level != typeof(ValueType) && level != typeof(Enum); level = level.BaseType)
        {
            if (!isShipped(level.Assembly))
            {
                return $"{path} is a {type}, which derives from {level}: a shipped type may derive only from object or from other types of your own.";
            }
        }

        foreach (FieldInfo field in FieldsOf(type))
        {
            if (CheckType(field.FieldType, isShipped, $"{type.Name}.{field.Name}", visited) is { } problem)
            {
                return problem;
            }
        }

        return null;
    }
}
