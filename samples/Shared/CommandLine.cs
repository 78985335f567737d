using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Invocation;
using System.CommandLine.Parsing;
using System.Globalization;

/// <summary>
/// What the samples and tools share on top of System.CommandLine: counts with suffixes (20M,
/// 256k, 1.2G), options with a fixed set of values, and one way to run a command line (usage
/// errors print "error: ..." and exit 2, as the README and tests expect; --help may end with
/// examples).
/// </summary>
/// <remarks>Linked into every sample and tool by eng/Sample.targets; not part of the library.</remarks>
static class Cli
{
    /// <summary>The exit code of a usage error (a bad option or value).</summary>
    public const int UsageError = 2;

    /// <summary>
    /// Parses <paramref name="args"/> and runs the chosen command's action. Invariant culture, so
    /// numbers print and parse alike everywhere.
    /// </summary>
    /// <param name="root">The program's command.</param>
    /// <param name="args">The arguments.</param>
    /// <param name="epilogue">Text after --help's option list (examples), or null.</param>
    /// <returns>0 after --help, <see cref="UsageError"/> after a usage error, else the action's exit code.</returns>
    public static int Run(RootCommand root, string[] args, string? epilogue = null)
    {
        ParseResult? result = Parse(root, args, epilogue);
        return result is null ? UsageError : result.Invoke();
    }

    /// <summary>
    /// Reports a usage error that only the action can see (options that do not fit together) as
    /// a parse error is reported, and returns <see cref="UsageError"/>. Not a command validator:
    /// a validator would read every option's value, and so throw on one that failed to parse.
    /// </summary>
    public static int UsageFailure(string message)
    {
        Console.Error.WriteLine($"error: {message}");
        Console.Error.WriteLine("Run with --help for the options.");
        return UsageError;
    }

    /// <summary>As <see cref="Run"/>, for commands with async actions.</summary>
    public static async Task<int> RunAsync(RootCommand root, string[] args, string? epilogue = null)
    {
        ParseResult? result = Parse(root, args, epilogue);
        return result is null ? UsageError : await result.InvokeAsync();
    }

    /// <summary>
    /// Runs one of a program's roles (a command's action): an exception ends it with "error:" and
    /// its type and message on standard error (each inner one of an <see cref="AggregateException"/>)
    /// and exit code 1, not with a stack trace.
    /// </summary>
    public static async Task<int> Report(Func<Task<int>> role)
    {
        try
        {
            return await role();
        }
        catch (AggregateException e)
        {
            foreach (Exception inner in e.InnerExceptions)
                Console.Error.WriteLine($"error: {inner.GetType().Name}: {inner.Message}");
            return 1;
        }
        catch (Exception e)
        {
            Console.Error.WriteLine($"error: {e.GetType().Name}: {e.Message}");
            return 1;
        }
    }

    /// <summary>An argument that is an absolute URI, such as a NameServer's http://127.0.0.1:9090 (System.CommandLine has no parser of its own for <see cref="Uri"/>).</summary>
    public static Argument<Uri> UriArgument(string name, string description) =>
        new(name)
        {
            Description = description,
            CustomParser = result =>
            {
                string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : "";
                if (Uri.TryCreate(text, UriKind.Absolute, out Uri? uri))
                    return uri;
                result.AddError($"<{name}> must be an absolute URI such as http://127.0.0.1:9090, not '{text}'.");
                return null;
            },
        };

    /// <summary>A count such as 20000000, 20_000_000, 20M or 1.2G (<see cref="ParseCount"/>).</summary>
    public static Option<long> Count(string name, string description, long defaultValue, long min, long max, int unit = 1000) =>
        Parsed(name, description, defaultValue, "N", text => ParseCount(text, unit, min, max, name));

    /// <summary>As <see cref="Count"/>, for values that fit an <see cref="int"/>.</summary>
    public static Option<int> IntCount(string name, string description, int defaultValue, int min, int max, int unit = 1000) =>
        Parsed(name, description, defaultValue, "N", text => (int)ParseCount(text, unit, min, max, name));

    /// <summary>As <see cref="IntCount"/>, for an option whose default the program works out when it is not given (null).</summary>
    public static Option<int?> OptionalIntCount(string name, string description, int min, int max, int unit = 1000) =>
        Parsed<int?>(name, description, null, "N", text => (int)ParseCount(text, unit, min, max, name));

    /// <summary>An option that takes a comma-separated list (10M,20M), given once; empty when it is not given.</summary>
    public static Option<T[]> List<T>(string name, string description, string helpName, Func<string, T> parseItem) =>
        Parsed(name, description, Array.Empty<T>(), helpName,
            text => text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(parseItem).ToArray());

    /// <summary>
    /// An option that takes one of <paramref name="choices"/> (several names may give one value);
    /// <paramref name="defaultName"/> names the default. Its value is a <see cref="Named{T}"/>, so
    /// --help shows the default by name.
    /// </summary>
    public static Option<Named<T>> Choice<T>(string name, string description, string defaultName, params (string Name, T Value)[] choices)
    {
        Named<T> Find(string text)
        {
            foreach ((string choice, T value) in choices)
            {
                if (string.Equals(choice, text, StringComparison.OrdinalIgnoreCase))
                    return new Named<T>(choice, value);
            }

            throw new FormatException($"{name} must be {string.Join(", ", choices.Select(c => c.Name))}, not '{text}'.");
        }

        return Parsed(name, description, Find(defaultName), string.Join(" | ", choices.Select(c => c.Name)), Find);
    }

    /// <summary>Parses counts such as 300000000, 300_000_000, 300M or 1.2G (k, M, G: powers of <paramref name="unit"/>, 1000 or 1024).</summary>
    /// <exception cref="FormatException">Not a number, an unknown suffix, or outside [<paramref name="min"/>, <paramref name="max"/>]; the message names <paramref name="option"/>.</exception>
    public static long ParseCount(string text, int unit, long min, long max, string option)
    {
        string digits = text.Replace("_", "").Replace(",", "");
        double multiplier = 1;
        if (digits.Length > 0 && char.IsLetter(digits[^1]))
        {
            multiplier = char.ToUpperInvariant(digits[^1]) switch
            {
                'K' => unit,
                'M' => (double)unit * unit,
                'G' => (double)unit * unit * unit,
                _ => throw new FormatException($"{option}: unknown suffix in '{text}' (use k, M or G)."),
            };
            digits = digits[..^1];
        }

        if (!double.TryParse(digits, NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
        {
            throw new FormatException($"{option}: '{text}' is not a number.");
        }

        double result = Math.Round(value * multiplier);
        if (result < min || result > max)
        {
            throw new FormatException($"{option} must be between {min:N0} and {max:N0}; got {text}.");
        }

        return (long)result;
    }

    static Option<T> Parsed<T>(string name, string description, T defaultValue, string helpName, Func<string, T> parse) =>
        new(name)
        {
            Description = description,
            HelpName = helpName,
            DefaultValueFactory = _ => defaultValue,
            CustomParser = result =>
            {
                if (result.Tokens.Count == 0)
                    return defaultValue;
                try
                {
                    return parse(result.Tokens[0].Value);
                }
                catch (FormatException e)
                {
                    // A parse error, not an exception: System.CommandLine reports it with the others.
                    result.AddError(e.Message);
                    return defaultValue;
                }
            },
        };

    static ParseResult? Parse(RootCommand root, string[] args, string? epilogue)
    {
        CultureInfo.CurrentCulture = CultureInfo.InvariantCulture;
        if (epilogue is not null)
        {
            foreach (HelpOption help in root.Options.OfType<HelpOption>())
            {
                if (help.Action is HelpAction standard)
                    help.Action = new HelpWithEpilogue(standard, epilogue);
            }
        }

        ParseResult result = root.Parse(args);
        if (result.Errors.Count == 0 || result.Action is HelpAction or HelpWithEpilogue)
            return result;

        foreach (ParseError error in result.Errors.SkipLast(1))
            Console.Error.WriteLine($"error: {error.Message}");
        UsageFailure(result.Errors[^1].Message);
        return null;
    }

    /// <summary>The standard help, then the program's examples.</summary>
    sealed class HelpWithEpilogue(HelpAction standard, string epilogue) : SynchronousCommandLineAction
    {
        public override int Invoke(ParseResult parseResult)
        {
            int exitCode = standard.Invoke(parseResult);
            parseResult.InvocationConfiguration.Output.WriteLine();
            parseResult.InvocationConfiguration.Output.WriteLine(epilogue);
            return exitCode;
        }
    }
}

/// <summary>A value chosen by name on the command line; prints as its name (--help's default).</summary>
sealed record Named<T>(string Name, T Value)
{
    public override string ToString() => Name;
}
