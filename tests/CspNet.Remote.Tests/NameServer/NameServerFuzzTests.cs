using System.Collections.Concurrent;
using Google.Protobuf;
using Grpc.Core;
using Proto = CspNet.Remote.Protocol;

namespace CspNet.Remote.Tests.NameServer;

/// <summary>Untrusted input: the server answers garbage with statuses and keeps serving.</summary>
public sealed class NameServerFuzzTests
{
    private const int Requests = 10_000;

    private static readonly string[] Methods = ["OpenLease", "Renew", "CloseLease", "Register", "Unregister", "Resolve", "MoveName"];

    private static readonly Marshaller<byte[]> RawBytes = Marshallers.Create(static b => b, static b => b);

    [Fact(Timeout = 60000)]
    public async Task Server_TenThousandMutatedRequests_AnswersEachWithAStatusAndKeepsServing()
    {
        // A short maximum wait: mutated Resolve requests may ask to wait for hours.
        await using var server = await NameServerTestHost.StartAsync(configure: o => o.MaxResolveWait = TimeSpan.FromMilliseconds(5));
        string[] leases = [await server.OpenLeaseAsync("fuzz-a"), await server.OpenLeaseAsync("fuzz-b")];
        var statuses = new ConcurrentDictionary<StatusCode, int>();
        var unexpected = new ConcurrentQueue<string>();

        await System.Threading.Tasks.Parallel.ForEachAsync(Enumerable.Range(0, Requests), new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (i, ct) =>
        {
            // One seed per request: a failure names the request that caused it, and reruns the same.
            var mutator = new Mutator(new Random(i), leases);
            bool raw = i % 10 == 0;
            StatusCode status = await SendAsync(server, mutator, raw, ct);
            statuses.AddOrUpdate(status, 1, static (_, n) => n + 1);

            // Bytes that are not a message fail to parse before the service sees them, and grpc-dotnet
            // answers UNKNOWN; a message, however mangled, must get one of the protocol's own statuses.
            if (status is StatusCode.Internal or StatusCode.Unavailable or StatusCode.Cancelled || (status == StatusCode.Unknown && !raw))
            {
                unexpected.Enqueue($"request {i}: {status}");
            }
        });

        Assert.Empty(unexpected);
        Assert.Equal(Requests, statuses.Values.Sum());
        Assert.True(statuses.ContainsKey(StatusCode.InvalidArgument));
        Assert.True(statuses.ContainsKey(StatusCode.OK));

        string lease = await server.OpenLeaseAsync("after");
        var registered = await server.Client.RegisterAsync(new Proto.RegisterRequest { LeaseId = lease, Entry = NameServerTestHost.Channel32("survivor") });
        var resolved = await server.Client.ResolveAsync(new Proto.ResolveRequest { Name = "survivor" });
        Assert.True(registered.Created);
        Assert.Equal(CspNet.Remote.NameServer.Incarnations.Of(lease), resolved.Entry.Incarnation);
    }

    private static async Task<StatusCode> SendAsync(NameServerTestHost server, Mutator m, bool raw, CancellationToken ct)
    {
        var options = new CallOptions(deadline: DateTime.UtcNow.AddSeconds(20), cancellationToken: ct);
        Proto.NameServer.NameServerClient client = server.Client;
        try
        {
            if (raw)
            {
                var method = new Method<byte[], byte[]>(MethodType.Unary, "cspnet.nameserver.v1.NameServer", m.Pick(Methods), RawBytes, RawBytes);
                await server.Channel.CreateCallInvoker().AsyncUnaryCall(method, null, options, m.Bytes());
                return StatusCode.OK;
            }

            IMessage reply = m.Next(6) switch
            {
                0 => await client.OpenLeaseAsync(new Proto.OpenLeaseRequest { Endpoint = m.Endpoint(), Program = m.Text() }, options),
                1 => await client.RenewAsync(new Proto.RenewRequest { LeaseId = m.LeaseId() }, options),
                2 => await client.CloseLeaseAsync(new Proto.CloseLeaseRequest { LeaseId = m.Text() }, options),
                3 => await client.RegisterAsync(new Proto.RegisterRequest { LeaseId = m.LeaseId(), Entry = m.Entry(), ReturnExisting = m.Next(2) == 0 }, options),
                4 => await client.UnregisterAsync(new Proto.UnregisterRequest { LeaseId = m.LeaseId(), Name = m.Name() }, options),
                _ => await client.ResolveAsync(new Proto.ResolveRequest { Name = m.Name(), WaitMs = m.WaitMs() }, options),
            };
            Assert.NotNull(reply);
            return StatusCode.OK;
        }
        catch (RpcException e)
        {
            return e.StatusCode;
        }
    }

    /// <summary>Makes plausible, broken and absurd field values in about equal measure.</summary>
    private sealed class Mutator(Random random, string[] leases)
    {
        private static readonly string[] Kinds = ["One2One", "Any2One", "One2Any", "Any2Any", "Barrier", "Bucket", "", "one2one", "1", "Barrier\0", "Channel", " Bucket"];

        public int Next(int max) => random.Next(max);

        public T Pick<T>(T[] items) => items[random.Next(items.Length)];

        public string Name() => random.Next(3) == 0 ? "name-" + random.Next(50) : Text();

        public string LeaseId() => random.Next(2) == 0 ? Pick(leases) : Text();

        public long WaitMs() => Pick(new[] { 0L, -1L, 1L, 3L, long.MaxValue, long.MinValue, random.NextInt64() });

        public int Port() => Pick(new[] { 0, 1, 80, 65535, 65536, -1, int.MaxValue, int.MinValue, random.Next() });

        public Proto.Endpoint? Endpoint() => random.Next(8) == 0 ? null : new Proto.Endpoint { Host = random.Next(2) == 0 ? "127.0.0.1" : Text(), Port = Port() };

        public Proto.NameEntry? Entry()
        {
            if (random.Next(10) == 0)
            {
                return null;
            }

            var entry = new Proto.NameEntry
            {
                Name = Name(),
                Kind = random.Next(3) == 0 ? Text() : Pick(Kinds),
                ValueType = random.Next(2) == 0 ? "int32" : Text(),
                BufferCapacity = random.Next(2) == 0 ? random.Next(-2, 3) : Port(),
                Incarnation = Text(),
            };
            if (random.Next(2) == 0)
            {
                entry.Endpoint = Endpoint();
            }

            return entry;
        }

        /// <summary>Empty, short, control characters, lone surrogates, over-long, now and then 70,000 characters.</summary>
        public string Text()
        {
            switch (random.Next(6))
            {
                case 0:
                    return "";
                case 1:
                    return new string('x', random.Next(50) == 0 ? 70_000 : random.Next(250, 1100));
                default:
                    var chars = new char[random.Next(1, 40)];
                    for (int i = 0; i < chars.Length; i++)
                    {
                        chars[i] = random.Next(4) == 0 ? (char)random.Next(0, 0xFFFF) : (char)random.Next('a', 'z' + 1);
                    }

                    return new string(chars);
            }
        }

        public byte[] Bytes()
        {
            var bytes = new byte[random.Next(0, 512)];
            random.NextBytes(bytes);
            return bytes;
        }
    }
}
