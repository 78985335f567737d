using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using System.Reflection.Emit;
using Xunit;

namespace CspNet.Remote.Tests.Architecture;

/// <summary>
/// Checks the layer rules of docs/ARCHITECTURE.md over the compiled assemblies: every type's base
/// types, fields, signatures and the members its method bodies use (read from the IL), so an edge
/// a change adds anywhere in the code is seen.
/// </summary>
public sealed class LayerDependencyTests
{
    private const string InternalPrefix = "CspNet.Remote.Internal.";

    // Each internal layer of CspNet.Remote and the layers it may use; a layer not listed as a key
    // may use nothing internal. Client and Homes are the two ends of a link: neither uses the other.
    private static readonly Dictionary<string, string[]> Allowed = new()
    {
        ["Diagnostics"] = [],
        ["Security"] = [],
        ["Serialization"] = ["Diagnostics"],
        ["Transport"] = ["Diagnostics", "Security", "Serialization"],
        ["Naming"] = ["Diagnostics", "Security", "Serialization", "Transport"],
        ["Client"] = ["Diagnostics", "Security", "Serialization", "Transport", "Naming"],
        ["Homes"] = ["Diagnostics", "Security", "Serialization", "Transport", "Naming"],
        ["Workers"] = ["Diagnostics", "Security", "Serialization", "Transport", "Naming", "Client"],
        ["Hosting"] = ["Diagnostics", "Security", "Serialization", "Transport", "Naming", "Client", "Homes", "Workers"],
    };

    // Each package's assembly and the CspNet assemblies it may reference (docs/ARCHITECTURE.md,
    // Packages): the core knows nothing built on it, and a client never carries the NameServer.
    public static TheoryData<string, string[]> PackageReferences => new()
    {
        { "CspNet", [] },
        { "CspNet.Extensions.Hosting", ["CspNet"] },
        { "CspNet.Remote", ["CspNet", "CspNet.Extensions.Hosting"] },
        { "CspNet.NameServer", ["CspNet", "CspNet.Remote"] },
        { "CspNet.NameServer.Etcd", ["CspNet", "CspNet.Remote", "CspNet.NameServer"] },
    };

    [Theory]
    [MemberData(nameof(PackageReferences))]
    public void PackageAssembly_References_OnlyTheCspNetAssembliesBelowIt(string name, string[] allowed)
    {
        Assembly assembly = Assembly.Load(name);

        string[] extra = [.. assembly.GetReferencedAssemblies().Select(a => a.Name!)
            .Where(n => n.StartsWith("CspNet.", StringComparison.Ordinal) || n == "CspNet")
            .Except(allowed)];

        Assert.True(extra.Length == 0, $"{name} references {string.Join(", ", extra)}; the package layers (docs/ARCHITECTURE.md) allow only {string.Join(", ", allowed.DefaultIfEmpty("none"))}.");
    }

    [Fact]
    public void CoreAssembly_References_OnlyTheRuntime()
    {
        Assembly core = typeof(CSPThreadPool).Assembly;

        // The CspNet package has no dependencies: everything it uses ships with .NET itself.
        string[] outside = [.. core.GetReferencedAssemblies().Select(a => a.Name!)
            .Where(n => n != "System" && n != "mscorlib" && n != "netstandard" && !n.StartsWith("System.", StringComparison.Ordinal))];

        Assert.True(outside.Length == 0, $"CspNet references {string.Join(", ", outside)}; the core package must depend on nothing but the runtime (AddCspNet lives in CspNet.Extensions.Hosting).");
    }

    [Fact]
    public void RemoteInternalLayers_UseOnly_TheirAllowedLowerLayers()
    {
        Assembly remote = typeof(CspNode).Assembly;
        var violations = new SortedSet<string>(StringComparer.Ordinal);
        foreach (Type type in remote.GetTypes())
        {
            string? from = LayerOf(type);
            if (from is null)
            {
                continue;
            }

            Assert.True(Allowed.ContainsKey(from), $"{Outermost(type).FullName} is in layer '{from}', which the layer rules do not list; add it to docs/ARCHITECTURE.md and to this test.");
            foreach (Type used in UsedTypes(type))
            {
                string? to = LayerOf(used);
                if (to is not null && to != from && !Allowed[from].Contains(to))
                {
                    violations.Add($"{Outermost(type).FullName} ({from}) uses {Outermost(used).FullName} ({to})");
                }
            }
        }

        Assert.True(violations.Count == 0, "Layer back-edges (see docs/ARCHITECTURE.md, Layers):\n" + string.Join("\n", violations));
    }

    // The core's internals that the distributed layer may use (docs/HOSTING-CONTRACT.md): the
    // hosting contract and the hold it hands out, the core ends a following end wraps, and the check
    // that refuses a blocking call made inside an async process. Overriding the public guard contract's members is not a use.
    private static readonly string[] HostingContract =
    [
        "CspNet.Internal.IHostedChannel`1",
        "CspNet.Internal.ChannelHold`1",
        "CspNet.Internal.ReaderClaim`1",

        // The following ends at a home (Internal/Homes/FollowingChannelIn/Out) wrap the home's own
        // core ends of a channel that can move live, and ask the reading end whether a selection
        // chose a value it holds for the next read (IsHolding).
        "CspNet.Internal.ChannelReadEnd`1",
        "CspNet.Internal.ChannelWriteEnd`1",
        "CspNet.Internal.Processes.ProcessContext.ThrowIfBlockingInAsyncProcess",
    ];

    [Fact]
    public void RemoteAssembly_UsesOfCoreInternals_OnlyTheHostingContract()
    {
        Assembly core = typeof(CSPThreadPool).Assembly;
        var violations = new SortedSet<string>(StringComparer.Ordinal);
        foreach (Type type in typeof(CspNode).Assembly.GetTypes())
        {
            foreach (MethodBase method in type.GetMethods(All).Cast<MethodBase>().Concat(type.GetConstructors(All)))
            {
                if (method.GetMethodBody() is not { } body)
                {
                    continue;
                }

                foreach (MemberInfo member in MembersUsedBy(method, body.GetILAsByteArray() ?? []))
                {
                    if (CoreInternal(member, core) is { } name && !HostingContract.Any(allowed => name == allowed || name.StartsWith(allowed + ".", StringComparison.Ordinal)))
                    {
                        violations.Add($"{Outermost(type).FullName}.{method.Name} uses {name}");
                    }
                }
            }
        }

        Assert.True(violations.Count == 0, "The distributed layer reaches core internals outside the hosting contract (docs/HOSTING-CONTRACT.md):\n" + string.Join("\n", violations));
    }

    /// <summary>The name of <paramref name="member"/> if it is an internal of the core assembly (a type, or a member only the assembly sees); null otherwise.</summary>
    private static string? CoreInternal(MemberInfo member, Assembly core)
    {
        Type? type = member as Type ?? member.DeclaringType;
        if (type is null || type.Assembly != core)
        {
            return null;
        }

        Type definition = type.IsGenericType ? type.GetGenericTypeDefinition() : type;
        if (!IsVisibleOutside(definition))
        {
            return member is Type ? definition.FullName : $"{definition.FullName}.{member.Name}";
        }

        bool memberVisible = member switch
        {
            MethodBase m => m.IsPublic || m.IsFamily || m.IsFamilyOrAssembly,
            FieldInfo f => f.IsPublic || f.IsFamily || f.IsFamilyOrAssembly,
            _ => true,
        };
        return memberVisible ? null : $"{definition.FullName}.{member.Name}";
    }

    private static bool IsVisibleOutside(Type type)
    {
        for (Type? t = type; t is not null; t = t.DeclaringType)
        {
            if (!(t.IsPublic || t.IsNestedPublic || t.IsNestedFamily || t.IsNestedFamORAssem))
            {
                return false;
            }
        }

        return true;
    }

    private static Type Outermost(Type type)
    {
        while (type.DeclaringType is { } outer)
        {
            type = outer;
        }

        return type;
    }

    private static string? LayerOf(Type type)
    {
        if (type.IsGenericType && !type.IsGenericTypeDefinition)
        {
            type = type.GetGenericTypeDefinition();
        }

        string? ns = Outermost(type).Namespace;
        if (ns is null || !ns.StartsWith(InternalPrefix, StringComparison.Ordinal))
        {
            return null;
        }

        string rest = ns[InternalPrefix.Length..];
        int dot = rest.IndexOf('.', StringComparison.Ordinal);
        return dot < 0 ? rest : rest[..dot];
    }

    private const BindingFlags All = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance | BindingFlags.Static | BindingFlags.DeclaredOnly;

    private static readonly Dictionary<short, OpCode> OpCodesByValue =
        typeof(OpCodes).GetFields(BindingFlags.Public | BindingFlags.Static).Select(f => (OpCode)f.GetValue(null)!).ToDictionary(o => o.Value);

    private static HashSet<Type> UsedTypes(Type type)
    {
        var found = new HashSet<Type>();
        void Add(Type? t)
        {
            if (t is null)
            {
                return;
            }

            if (t.HasElementType)
            {
                Add(t.GetElementType());
                return;
            }

            if (t.IsGenericParameter || !found.Add(t))
            {
                return;
            }

            if (t.IsGenericType)
            {
                foreach (Type argument in t.GetGenericArguments())
                {
                    Add(argument);
                }
            }
        }

        Add(type.BaseType);
        foreach (Type i in type.GetInterfaces())
        {
            Add(i);
        }

        foreach (FieldInfo field in type.GetFields(All))
        {
            Add(field.FieldType);
        }

        foreach (PropertyInfo property in type.GetProperties(All))
        {
            Add(property.PropertyType);
        }

        foreach (MethodBase method in type.GetMethods(All).Cast<MethodBase>().Concat(type.GetConstructors(All)))
        {
            if (method is MethodInfo info)
            {
                Add(info.ReturnType);
            }

            foreach (ParameterInfo parameter in method.GetParameters())
            {
                Add(parameter.ParameterType);
            }

            MethodBody? body = method.GetMethodBody();
            if (body is null)
            {
                continue;
            }

            foreach (LocalVariableInfo local in body.LocalVariables)
            {
                Add(local.LocalType);
            }

            foreach (MemberInfo member in MembersUsedBy(method, body.GetILAsByteArray() ?? []))
            {
                Add(member as Type ?? member.DeclaringType);
                if (member is FieldInfo f)
                {
                    Add(f.FieldType);
                }
                else if (member is MethodInfo m)
                {
                    Add(m.ReturnType);
                }
            }
        }

        return found;
    }

    private static IEnumerable<MemberInfo> MembersUsedBy(MethodBase method, byte[] il)
    {
        Type[]? typeArguments = method.DeclaringType is { IsGenericType: true } d ? d.GetGenericArguments() : null;
        Type[]? methodArguments = method.IsGenericMethod ? method.GetGenericArguments() : null;
        int at = 0;
        while (at < il.Length)
        {
            short value = il[at] == 0xFE ? (short)(0xFE00 | il[at + 1]) : il[at];
            at += il[at] == 0xFE ? 2 : 1;
            OpCode op = OpCodesByValue[value];
            switch (op.OperandType)
            {
                case OperandType.InlineNone:
                    break;
                case OperandType.ShortInlineBrTarget or OperandType.ShortInlineI or OperandType.ShortInlineVar:
                    at += 1;
                    break;
                case OperandType.InlineVar:
                    at += 2;
                    break;
                case OperandType.InlineI8 or OperandType.InlineR:
                    at += 8;
                    break;
                case OperandType.InlineSwitch:
                    at += 4 + (4 * BitConverter.ToInt32(il, at));
                    break;
                case OperandType.InlineField or OperandType.InlineMethod or OperandType.InlineTok or OperandType.InlineType:
                    int token = BitConverter.ToInt32(il, at);
                    at += 4;
                    MemberInfo? member = null;
                    try
                    {
                        member = method.Module.ResolveMember(token, typeArguments, methodArguments);
                    }
                    catch (ArgumentException)
                    {
                        // A token into another module's generic context: its types are seen through signatures.
                    }

                    if (member is not null)
                    {
                        yield return member;
                    }

                    break;
                default:
                    at += 4;
                    break;
            }
        }
    }
}
