package dev.drover.bench;

import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.HelpText;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.UsageError;
import dev.drover.common.UserText;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code java -jar drover-bench.jar FLAGS}: the load harness, one agent under many allocations
 * (docs/BENCHMARKS.md). It lives beside the JMH benchmarks rather than in drover-local, whose API server it starts
 * from the same jar.
 */
public final class BenchMain {

    private BenchMain() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length > 0 && args[0].equals("pull")) {
            return pull(List.of(args).subList(1, args.length), out, err);
        }
        if (args.length > 0 && args[0].equals("network")) {
            return network(List.of(args).subList(1, args.length), out, err);
        }
        try {
            ParsedArgs flags = FlagParser.parse(flags(), List.of(args), false);
            if (flags.help()) {
                out.print(usage());
                return 0;
            }
            if (!flags.positional().isEmpty()) {
                throw new UsageError("drover-bench takes flags only, not "
                        + UserText.quote(flags.positional().getFirst()));
            }
            return Bench.run(args, out, err);
        } catch (UsageError | Bench.UsageException e) {
            err.println("drover-bench: " + e.getMessage());
            err.print(usage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (Exception e) {
            err.println("drover-bench: " + e.getMessage());
            return 1;
        }
    }

    /** {@code pull IMAGE}: the agent's image pull, timed ({@link PullBench}). */
    private static int pull(List<String> args, PrintStream out, PrintStream err) {
        try {
            return PullBench.run(args, out, err);
        } catch (UsageError e) {
            err.println("drover-bench pull: " + e.getMessage());
            err.print(PullBench.usage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (Exception e) {
            err.println("drover-bench pull: " + e.getMessage());
            return 1;
        }
    }

    /** {@code network}: allocation networks set up and torn down through the agent's code ({@link NetworkBench}). */
    private static int network(List<String> args, PrintStream out, PrintStream err) {
        try {
            return NetworkBench.run(args, out, err);
        } catch (UsageError e) {
            err.println("drover-bench network: " + e.getMessage());
            err.print(NetworkBench.usage());
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (Exception e) {
            err.println("drover-bench network: " + e.getMessage());
            return 1;
        }
    }

    /** {@code --help}: the flags, then what the bench prints. */
    static String usage() {
        return "usage: java -jar drover-bench.jar --allocs N --tasks M [FLAGS]\n"
                + "   or: java -jar drover-bench.jar pull [--runs N] [--registry-ca-file FILE] IMAGE\n"
                + "   or: java -jar drover-bench.jar network [--allocs N] [--concurrency C] (see network --help)\n\n"
                + "starts N allocations of M tasks on a local API server and agent and prints one JSON line\n\n"
                + "flags:\n" + HelpText.flags(flags()) + "\n" + Bench.details();
    }

    private static List<dev.drover.cli.flags.Flag> flags() {
        List<dev.drover.cli.flags.Flag> all = new ArrayList<>(Bench.flags());
        all.add(FlagParser.HELP);
        return all;
    }
}
