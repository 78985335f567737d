using System;
using System.Collections.Generic;
using CspNet.Remote.Internal.Naming;
using Google.Protobuf;
using Proto = CspNet.Remote.Protocol.Workers;

namespace CspNet.Remote.Internal.Workers;

/// <summary>Converts between the worker pool's types and the messages of workerpool.proto.</summary>
/// <remarks>Shared by the pool and <see cref="DistParallel"/> so that both read the wire the same way.</remarks>
internal static class WorkerProtocol
{
    /// <summary>The metadata key of the pool token (value <c>Bearer token</c>).</summary>
    internal const string AuthorizationHeader = "authorization";

    /// <summary>The largest part of an assembly image in one frame.</summary>
    internal const int ChunkSize = 1 << 20;

    /// <summary>The most workers one Reserve may ask for.</summary>
    internal const int MaxReserve = NameValidation.MaxWorkers;

    // An inner-exception chain deeper than this is cut: a hostile or runaway chain must not make a frame unbounded.
    private const int MaxFailureDepth = 8;

    internal static Proto.Job ToProto(ulong id, ShippedProcess job)
    {
        var message = new Proto.Job
        {
            JobId = id,
            TypeName = job.TypeName,
            AssemblyName = job.AssemblyName,
            State = ByteString.CopyFrom(job.State),
        };
        foreach (ShippedAssembly assembly in job.Assemblies)
        {
            message.Assemblies.Add(new Proto.AssemblyRef { Name = assembly.Name, Sha256 = assembly.Sha256 });
        }

        return message;
    }

    /// <summary>Reads a job from an untrusted client.</summary>
    /// <exception cref="ArgumentException">The job is malformed (the message says how).</exception>
    internal static ShippedProcess FromProto(Proto.Job job)
    {
        if (job.TypeName.Length is 0 or > 1024 || job.AssemblyName.Length is 0 or > 1024)
        {
            throw new ArgumentException("A job needs a type name and an assembly name of at most 1024 characters.");
        }

        // Whether the type and its assembly are among those shipped is the code store's decision
        // (a refusal the client can read), not a malformed frame.
        var assemblies = new List<ShippedAssembly>(job.Assemblies.Count);
        foreach (Proto.AssemblyRef reference in job.Assemblies)
        {
            if (!IsSha256(reference.Sha256) || reference.Name.Length is 0 or > 1024)
            {
                throw new ArgumentException($"The assembly '{NameValidation.Shorten(reference.Name)}' needs a name and a SHA-256 of 64 lower-case hex digits.");
            }

            assemblies.Add(new ShippedAssembly(reference.Name, reference.Sha256));
        }

        return new ShippedProcess(job.TypeName, job.AssemblyName, job.State.ToByteArray(), assemblies);
    }

    internal static bool IsSha256(string text)
    {
        if (text.Length != 64)
        {
            return false;
        }

        foreach (char c in text)
        {
            if (c is not ((>= '0' and <= '9') or (>= 'a' and <= 'f')))
            {
                return false;
            }
        }

        return true;
    }

    internal static Proto.Failure ToProto(ProcessFailure failure, int depth = 0) => new()
    {
        TypeName = failure.TypeName,
        Message = failure.Message,
        StackTrace = failure.StackTrace,
        Inner = failure.Inner is { } inner && depth < MaxFailureDepth ? ToProto(inner, depth + 1) : null,
    };

    internal static RemoteProcessException ToException(Proto.Failure failure, int depth = 0) => new(
        failure.TypeName,
        failure.Message,
        failure.StackTrace,
        failure.Inner is { } inner && depth < MaxFailureDepth ? ToException(inner, depth + 1) : null);

    internal static Proto.RefusalReason ToProto(ShippingRefusal reason) => reason switch
    {
        ShippingRefusal.HashMismatch => Proto.RefusalReason.HashMismatch,
        ShippingRefusal.AssemblyMissing => Proto.RefusalReason.AssemblyMissing,
        ShippingRefusal.TypeNotAllowed => Proto.RefusalReason.TypeNotAllowed,
        ShippingRefusal.MalformedState => Proto.RefusalReason.MalformedState,
        ShippingRefusal.Cancelled => Proto.RefusalReason.Cancelled,
        _ => Proto.RefusalReason.Unspecified,
    };

    internal static string Describe(Proto.RefusalReason reason) => reason switch
    {
        Proto.RefusalReason.HashMismatch => "an assembly image did not have its announced SHA-256 (tampered or corrupt)",
        Proto.RefusalReason.AssemblyMissing => "an assembly the job needs never arrived",
        Proto.RefusalReason.TypeNotAllowed => "the process type or a type in its fields is outside the worker's allow-list",
        Proto.RefusalReason.MalformedState => "the process's fields do not decode as its type",
        Proto.RefusalReason.Cancelled => "the run was cancelled before the process started",
        _ => "an unknown reason",
    };
}
