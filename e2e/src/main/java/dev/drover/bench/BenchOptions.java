package dev.drover.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The flags of {@code bench}.
 *
 * @param agentJvm the agent's JVM options; null: the image's ({@link AgentJvm})
 * @param timeline where to write each allocation's timeline as CSV, or null
 */
record BenchOptions(int allocs, int tasks, boolean restart, Path agentJar, List<String> agentJvm, Path timeline) {

    static BenchOptions parse(String[] args) {
        int allocs = 100;
        int tasks = 2;
        boolean restart = false;
        Path jar = Path.of("operator", "target", "drover-agent.jar");
        List<String> jvm = null;
        Path timeline = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--allocs" -> allocs = positive(args, ++i, "--allocs");
                case "--tasks" -> tasks = positive(args, ++i, "--tasks");
                case "--restart" -> restart = true;
                case "--agent-jar" -> jar = Path.of(arg(args, ++i, "--agent-jar"));
                case "--agent-jvm" ->
                    jvm = List.of(arg(args, ++i, "--agent-jvm").trim().split("\\s+"));
                case "--timeline" -> timeline = Path.of(arg(args, ++i, "--timeline"));
                default -> throw new Bench.UsageException("unknown flag \"" + args[i] + "\"");
            }
        }
        if (!Files.isRegularFile(jar)) {
            throw new Bench.UsageException(
                    "no agent jar at " + jar + " (build it with ./mvnw package, or give" + " --agent-jar)");
        }
        return new BenchOptions(allocs, tasks, restart, jar, jvm, timeline);
    }

    private static String arg(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new Bench.UsageException(flag + " needs a value");
        }
        return args[i];
    }

    private static int positive(String[] args, int i, String flag) {
        try {
            int n = Integer.parseInt(arg(args, i, flag));
            if (n < 1) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new Bench.UsageException(flag + " needs a positive whole number");
        }
    }

    static String usage() {
        return String.join(
                        "\n",
                        List.of(
                                "  bench --allocs N --tasks M [--restart] [--agent-jar FILE] [--agent-jvm \"OPTIONS\"] [--timeline CSV]",
                                "      Start the local API server and the agent jar (default operator/target/drover-agent.jar) as",
                                "      child processes, the agent with the image's JVM options (or OPTIONS), create N allocations of M mock",
                                "      tasks at once, and print one JSON line:",
                                "      allRunningSeconds, p50Seconds/p99Seconds (seen by the agent to Running),",
                                "      createToRunningP50Seconds/createToRunningP99Seconds, statusWrites, stateChanges,",
                                "      heapBytesPerAlloc, and with --restart restoreSeconds and restartsAfterRestore.",
                                "      --timeline writes each allocation's created, received, started and running times (ms) as CSV."))
                + "\n";
    }
}
