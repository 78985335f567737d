// JCSP net2 measured the way the crossproc command of CspNet.Remote.Benchmarks measures the
// named channel: two OS programs on 127.0.0.1, a reader that hosts a net2 channel and a writer
// that connects to it. Built against JCSP's sources by run.sh; not part of the .NET build.
//
//   java NetPingPong reader [--filter raw|object]
//       prints "READY <port>" once the channel exists, then takes values until an empty array.
//   java NetPingPong writer <port> [--warmup S] [--rounds N] [--round S] [--only sync|stream]
//                               [--filter raw|object]
//       prints the tables (median round of each size) on stdout, progress on stderr.

import jcsp.net2.NetAltingChannelInput;
import jcsp.net2.NetChannel;
import jcsp.net2.NetChannelOutput;
import jcsp.net2.NetworkMessageFilter;
import jcsp.net2.Node;
import jcsp.net2.ObjectNetworkMessageFilter;
import jcsp.net2.RawNetworkMessageFilter;
import jcsp.net2.tcpip.TCPIPNodeAddress;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;

public final class NetPingPong
{
    /** The reader's channel number (a numbered channel, so the writer needs only the node's port). */
    private static final int CHANNEL = 50;

    private static final int[] SYNC_SIZES = { 1, 1 << 10, 64 << 10, 1 << 20, 4 << 20 };

    private static final int[] STREAM_SIZES = { 64 << 10, 1 << 20, 4 << 20 };

    /** Values per stream operation, as NamedThroughput.Burst: BURST - 1 asyncWrites, then one write. */
    private static final int BURST = 64;

    public static void main(String[] args) throws Exception
    {
        if (args.length < 1)
        {
            System.err.println("usage: NetPingPong reader | writer <port> [--warmup S] [--rounds N] [--round S] [--only sync|stream] [--filter raw|object]");
            System.exit(2);
        }

        boolean raw = !"object".equals(option(args, "--filter", "raw"));
        if (args[0].equals("reader"))
        {
            runReader(raw);
        }
        else if (args[0].equals("writer") && args.length >= 2)
        {
            runWriter(Integer.parseInt(args[1]), raw, args);
        }
        else
        {
            System.err.println("NetPingPong: the first argument is 'reader' or 'writer <port>'.");
            System.exit(2);
        }

        // JCSP's link threads are not daemons; end the program explicitly.
        System.exit(0);
    }

    private static void runReader(boolean raw) throws Exception
    {
        TCPIPNodeAddress address = new TCPIPNodeAddress("127.0.0.1", 0);
        Node.getInstance().init(address);
        NetworkMessageFilter.FilterRx decoder = raw
            ? new RawNetworkMessageFilter.FilterRX()
            : new ObjectNetworkMessageFilter.FilterRX();
        NetAltingChannelInput<Object> input = NetChannel.numberedNet2One(CHANNEL, decoder);
        System.out.println("READY " + address.getPort());
        System.out.flush();
        while (true)
        {
            byte[] value = (byte[])input.read();
            if (value.length == 0)
            {
                return;
            }
        }
    }

    private static void runWriter(int port, boolean raw, String[] args) throws Exception
    {
        double warmup = Double.parseDouble(option(args, "--warmup", "3"));
        double round = Double.parseDouble(option(args, "--round", "1"));
        int rounds = Integer.parseInt(option(args, "--rounds", "5"));
        String only = option(args, "--only", "both");

        Node.getInstance().init(new TCPIPNodeAddress("127.0.0.1", 0));
        NetworkMessageFilter.FilterTx encoder = raw
            ? new RawNetworkMessageFilter.FilterTX()
            : new ObjectNetworkMessageFilter.FilterTX();
        NetChannelOutput<Object> output = NetChannel.one2net(new TCPIPNodeAddress("127.0.0.1", port), CHANNEL, encoder);

        int[] syncSizes = only.equals("stream") ? new int[0] : SYNC_SIZES;
        int[] streamSizes = only.equals("sync") ? new int[0] : STREAM_SIZES;
        double[] syncMicros = new double[syncSizes.length];
        double[] streamMBs = new double[streamSizes.length];

        for (int i = 0; i < syncSizes.length; i++)
        {
            byte[] value = newValue(syncSizes[i]);
            syncMicros[i] = measure(() -> output.write(value), 1, warmup, round, rounds);
            System.err.printf(Locale.ROOT, "JCSP net2 sync write %d B: %.1f us%n", syncSizes[i], syncMicros[i]);
        }

        for (int i = 0; i < streamSizes.length; i++)
        {
            byte[] value = newValue(streamSizes[i]);
            // asyncWrite returns at once; the closing write returns when the reader has taken it,
            // and net2 delivers in order, so the burst has then been taken whole.
            double micros = measure(() ->
            {
                for (int k = 0; k < BURST - 1; k++)
                {
                    output.asyncWrite(value);
                }
                output.write(value);
            }, BURST, warmup, round, rounds);
            streamMBs[i] = streamSizes[i] / micros; // bytes per µs = MB/s
            System.err.printf(Locale.ROOT, "JCSP net2 asyncWrite %d B: %.0f MB/s%n", streamSizes[i], streamMBs[i]);
        }

        output.write(new byte[0]); // tells the reader to end

        String filter = raw ? "RawNetworkMessageFilter" : "ObjectNetworkMessageFilter";
        System.out.printf(Locale.ROOT, "JCSP net2, two OS programs on 127.0.0.1 (%s, Java %s); a warm-up of %s s or more (until the writer's JIT is quiet), median of %d rounds of >= %s s; load %s%n",
            filter, System.getProperty("java.version"), trim(warmup), rounds, trim(round), loadAverage());
        printTable("JCSP net2 sync write", syncSizes, syncMicros, "%,.1f µs");
        printTable("JCSP net2 asyncWrite stream", streamSizes, streamMBs, "%,.0f MB/s");
    }

    private static void printTable(String column, int[] sizes, double[] figures, String format)
    {
        if (sizes.length == 0)
        {
            return;
        }

        System.out.println();
        System.out.println("| value | " + column + " |");
        System.out.println("|---:|---:|");
        for (int i = 0; i < sizes.length; i++)
        {
            System.out.println("| " + describe(sizes[i]) + " | " + String.format(Locale.ROOT, format, figures[i]) + " |");
        }
    }

    private interface Operation
    {
        void run() throws Exception;
    }

    /** The most JIT time one second of warm-up may still take for the writer to count as warm. */
    private static final long QUIET_JIT_MILLIS = 20;

    /**
     * Runs the operation for the warm-up, then the rounds; returns the median round's µs per value.
     * The warm-up lasts the given seconds or more: it goes on (at most a minute) until a second
     * passes in which the JVM's JIT compiled for less than QUIET_JIT_MILLIS, the rule the .NET
     * programs' warm-up follows.
     */
    private static double measure(Operation operation, int valuesPerOperation, double warmup, double round, int rounds) throws Exception
    {
        long warming = System.nanoTime();
        runFor(operation, valuesPerOperation, warmup);
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        while (jit != null && jit.isCompilationTimeMonitoringSupported() && System.nanoTime() - warming < 60_000_000_000L)
        {
            long compiled = jit.getTotalCompilationTime();
            runFor(operation, valuesPerOperation, 1);
            if (jit.getTotalCompilationTime() - compiled < QUIET_JIT_MILLIS)
            {
                break;
            }
        }

        List<Double> figures = new ArrayList<>();
        for (int i = 0; i < rounds; i++)
        {
            figures.add(runFor(operation, valuesPerOperation, round));
        }

        Collections.sort(figures);
        return figures.get(figures.size() / 2);
    }

    private static double runFor(Operation operation, int valuesPerOperation, double seconds) throws Exception
    {
        long start = System.nanoTime();
        long limit = (long)(seconds * 1e9);
        long operations = 0;
        long elapsed;
        do
        {
            operation.run();
            operations++;
            elapsed = System.nanoTime() - start;
        }
        while (elapsed < limit);
        return elapsed / 1e3 / (operations * (double)valuesPerOperation);
    }

    private static String option(String[] args, String name, String fallback)
    {
        int at = Arrays.asList(args).indexOf(name);
        return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
    }

    private static byte[] newValue(int size)
    {
        byte[] value = new byte[size];
        new Random().nextBytes(value);
        return value;
    }

    private static String describe(int size)
    {
        if (size >= 1 << 20)
        {
            return (size >> 20) + " MB";
        }

        return size >= 1 << 10 ? (size >> 10) + " KB" : size + " B";
    }

    private static String trim(double seconds)
    {
        return seconds == Math.rint(seconds) ? Long.toString((long)seconds) : Double.toString(seconds);
    }

    private static String loadAverage()
    {
        try
        {
            return new String(Files.readAllBytes(Paths.get("/proc/loadavg"))).trim();
        }
        catch (Exception e)
        {
            return "unknown";
        }
    }
}
