namespace CspNet.Remote.TestJobs;

/// <summary>What the state round trip covers: a day of the week, as an enum of this assembly.</summary>
public enum Weekday
{
    Monday,
    Tuesday,
    Sunday = 6,
}

/// <summary>A struct of this assembly.</summary>
public struct Point
{
    public int X;
    public int Y;
}

/// <summary>A base class whose private field must travel too.</summary>
public abstract class JobBase
{
    private readonly string baseName;

    protected JobBase(string baseName) => this.baseName = baseName;

    public string BaseName => baseName;
}

/// <summary>A shape for polymorphic fields.</summary>
public class Shape
{
    public string Name = "shape";
}

/// <summary>A derived shape, stored in a field declared as <see cref="Shape"/> or object.</summary>
public sealed class Circle : Shape
{
    public double Radius;
}

/// <summary>
/// A process with a field of every kind the shipping serializer supports; Run() writes a summary
/// of its state to <see cref="Result"/>, so a test can compare both sides.
/// </summary>
[Serializable]
public sealed class StateJob : JobBase, ICSPProcess
{
    private readonly int number;
    private readonly long big = long.MinValue;
    private readonly decimal money;
    private readonly DateTime when;
    private readonly DateTimeOffset whenOffset;
    private readonly TimeSpan span;
    private readonly Guid id;
    private readonly Weekday day;
    private readonly int? maybe;
    private readonly int? nothing;
    private readonly Point point;
    private readonly int[] numbers;
    private readonly byte[] bytes;
    private readonly List<string> words;
    private readonly Dictionary<string, int> counts;
    private readonly HashSet<Weekday> days;
    private readonly Shape shape;
    private readonly object boxed;
    private readonly object? none;
    private readonly Shape[] shapes;
    [NonSerialized]
    private readonly string stayBehind;

    public StateJob(int number)
        : base("base-" + number)
    {
        this.number = number;
        money = 12.345m * number;
        when = new DateTime(2006, 5, 1, 12, 0, 0, DateTimeKind.Utc);
        whenOffset = new DateTimeOffset(2026, 11, 23, 10, 0, 0, TimeSpan.FromHours(2));
        span = TimeSpan.FromMilliseconds(number);
        id = new Guid(number, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
        day = Weekday.Sunday;
        maybe = number + 1;
        nothing = null;
        point = new Point { X = number, Y = -number };
        numbers = [1, 2, number];
        bytes = [0, 255, (byte)number];
        words = ["plus", "minus", "ε"];
        counts = new Dictionary<string, int> { ["a"] = 1, ["b"] = number };
        days = [Weekday.Monday, Weekday.Tuesday];
        shape = new Circle { Name = "circle", Radius = 1.5 };
        boxed = number * 2;
        none = null;
        shapes = [new Shape { Name = "s" }, new Circle { Name = "c", Radius = 2 }];
        stayBehind = "here";
    }

    /// <summary>The summary Run() wrote.</summary>
    public string? Result { get; private set; }

    /// <summary>The summary of this object's state (also what Run() stores).</summary>
    public string Describe() =>
        string.Join("|",
            BaseName, number, big, money, when.ToString("O"), when.Kind, whenOffset.ToString("O"), span, id, day, maybe, nothing is null, point.X, point.Y,
            string.Join(",", numbers), Convert.ToHexString(bytes), string.Join(",", words),
            string.Join(",", counts.OrderBy(p => p.Key).Select(p => p.Key + "=" + p.Value)), string.Join(",", days.Order()),
            shape.GetType().Name, shape.Name, (shape as Circle)?.Radius, boxed.GetType().Name, boxed, none is null,
            string.Join(",", shapes.Select(s => s.GetType().Name + ":" + s.Name)), stayBehind ?? "(not shipped)",
            GetType().Assembly.GetName().Name);

    public void Run() => Result = Describe();
}

/// <summary>A process that fails, with an inner exception.</summary>
[Serializable]
public sealed class FailingJob : ICSPProcess
{
    private readonly string reason;

    public FailingJob(string reason) => this.reason = reason;

    public void Run()
    {
        try
        {
            throw new ArgumentException("inner: " + reason);
        }
        catch (ArgumentException e)
        {
            throw new InvalidOperationException("outer: " + reason, e);
        }
    }
}

/// <summary>A process whose state holds a framework type outside the allow-list.</summary>
public sealed class FileJob : ICSPProcess
{
    private readonly FileInfo? file;

    public FileJob(FileInfo? file) => this.file = file;

    public void Run() => _ = file?.Exists;
}

/// <summary>A process whose state holds a channel end (it must get named channels inside Run instead).</summary>
public sealed class ChannelJob : ICSPProcess
{
    private readonly IChannelOut<int> output;

    public ChannelJob(IChannelOut<int> output) => this.output = output;

    public void Run() => output.Write(1);
}

/// <summary>A process holding a delegate.</summary>
public sealed class DelegateJob : ICSPProcess
{
    private readonly Func<int> compute;

    public DelegateJob(Func<int> compute) => this.compute = compute;

    public void Run() => _ = compute();
}

/// <summary>A list node, for the cycle test.</summary>
public sealed class Node
{
    public Node? Next;
}

/// <summary>A process whose state has a cycle.</summary>
public sealed class CycleJob : ICSPProcess
{
    private readonly Node head;

    public CycleJob()
    {
        head = new Node();
        head.Next = new Node { Next = head };
    }

    public void Run() => _ = head.Next;
}

/// <summary>A process with a field declared object that may be set to anything (the allow-list test sets a disallowed value).</summary>
public sealed class ObjectJob : ICSPProcess
{
    private readonly object? payload;

    public ObjectJob(object? payload) => this.payload = payload;

    public object? Payload => payload;

    public void Run() => _ = payload;
}
