using System.Reflection;
using CspNet.Remote.Internal.Serialization;
using Google.Protobuf.WellKnownTypes;

namespace CspNet.Remote.Tests.Serialization;

public class UnsupportedTypeTests
{
    public interface IShape
    {
        double Area { get; }
    }

    public abstract class AbstractShape
    {
        public double Area { get; set; }
    }

    public sealed class NoUsableConstructor
    {
        public NoUsableConstructor(int a, int b) => Sum = a + b;

        public NoUsableConstructor(int a) => Sum = a;

        public int Sum { get; }
    }

    public sealed class MismatchedConstructor
    {
        public MismatchedConstructor(long value) => Value = (int)value;

        public int Value { get; }
    }

    public sealed record WithCallback(string Name, Action Callback);

    public sealed record WithObject(string Name, object Payload);

    public sealed record WithInterfaceList(List<IShape> Shapes);

    public sealed record RecordKey(int A);

    public sealed record WithRecordKeys(Dictionary<RecordKey, int> Counts);

    public sealed record WithTimestamp(Timestamp At);

    public sealed record WithChannel(One2OneChannel<int> Channel);

    public sealed record Recursive(string Name, List<Recursive> Children, Action? Hook);

    public sealed class CustomWaitHandle : WaitHandle;

    public static TheoryData<System.Type, string> Refused => new()
    {
        { typeof(Action), "delegates" },
        { typeof(Func<int>), "delegates" },
        { typeof(Task), "task" },
        { typeof(Task<int>), "task" },
        { typeof(ValueTask), "task" },
        { typeof(ValueTask<int>), "task" },
        { typeof(Stream), "stream" },
        { typeof(MemoryStream), "stream" },
        { typeof(Thread), "threading" },
        { typeof(CancellationToken), "threading" },
        { typeof(CancellationTokenSource), "threading" },
        { typeof(SemaphoreSlim), "threading" },
        { typeof(ManualResetEvent), "threading" },
        { typeof(CustomWaitHandle), "threading" },
        { typeof(IntPtr), "pointers" },
        { typeof(UIntPtr), "pointers" },
        { typeof(InvalidOperationException), "exceptions" },
        { typeof(System.Type), "reflection" },
        { typeof(MethodInfo), "reflection" },
        { typeof(One2OneChannel<int>), "CspNet channels" },
        { typeof(IChannelIn<int>), "CspNet channels" },
        { typeof(IChannelOut<string>), "CspNet channels" },
        { typeof(Guard), "CspNet channels" },
        { typeof(CspNet.Barrier), "CspNet channels" },
        { typeof(Bucket), "CspNet channels" },
        { typeof(Alternative), "CspNet channels" },
        { typeof(CspNet.Parallel), "CspNet channels" },
        { typeof(object), "System.Object" },
        { typeof(IShape), "polymorphism" },
        { typeof(AbstractShape), "polymorphism" },
        { typeof(NoUsableConstructor), "no constructor" },
        { typeof(MismatchedConstructor), "constructor parameter 'value'" },
        { typeof(WithCallback), "$.Callback" },
        { typeof(WithObject), "$.Payload" },
        { typeof(WithInterfaceList), "$.Shapes[]" },
        { typeof(WithRecordKeys), "$.Counts{key}" },
        { typeof(WithTimestamp), "protobuf" },
        { typeof(WithChannel), "$.Channel" },
        { typeof(Recursive), "$.Hook" },
        { typeof(List<Task<int>>), "$[]" },
        { typeof(Dictionary<string, Stream>), "${}" },
        { typeof(KeyValuePair<int, Action>), "$.Value" },
        { typeof(List<object>), "$[]" },
    };

    [Theory]
    [MemberData(nameof(Refused))]
    public void Get_TypeThatCannotCross_ThrowsNotSupportedNamingTypeAndReason(System.Type type, string reason)
    {
        NotSupportedException e = Assert.Throws<NotSupportedException>(() => GetCodec(type));

        Assert.Contains(WireTypeNames.Of(type), e.Message, StringComparison.Ordinal);
        Assert.Contains(reason, e.Message, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("CspSerializers.Register", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Get_RefusedTypeAskedTwice_ThrowsNotSupportedBothTimes()
    {
        Assert.Throws<NotSupportedException>(() => ValueCodec<Action<int>>.Get());
        Assert.Throws<NotSupportedException>(() => ValueCodec<Action<int>>.Get());
    }

    [Theory]
    [InlineData(typeof(List<>), "open generic")]
    [InlineData(typeof(Dictionary<,>), "open generic")]
    [InlineData(typeof(int*), "pointers")]
    [InlineData(typeof(Span<byte>), "by-ref-like")]
    [InlineData(typeof(ReadOnlySpan<char>), "by-ref-like")]
    public void ThrowIfLocal_TypesNoCodecCanBeAskedFor_ThrowsNotSupported(System.Type type, string reason)
    {
        NotSupportedException e = Assert.Throws<NotSupportedException>(() => CrossingRules.ThrowIfLocal(type));
        Assert.Contains(reason, e.Message, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void ThrowIfLocal_ByRefType_ThrowsNotSupported() =>
        Assert.Throws<NotSupportedException>(() => CrossingRules.ThrowIfLocal(typeof(int).MakeByRefType()));

    private static object GetCodec(System.Type type) =>
        typeof(ValueCodec<>).MakeGenericType(type)
            .GetMethod(nameof(ValueCodec<int>.Get), BindingFlags.Public | BindingFlags.Static)!
            .Invoke(null, BindingFlags.DoNotWrapExceptions, null, null, null)!;
}
