package dev.drover.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The flags of {@code bench}.
 *
 * @param agentJvm the agent's JVM options; null: the image's ({@link AgentJvm})
 * @param timeline where to write each allocation's timeline as CSV, or null
 * @param driver the tasks' driver: {@code mock}, or {@code raw_exec} (each task a host {@code /bin/sleep})
 * @param httpCheck whether each task has one http check every 10 s (at the bench's {@link CheckTarget})
 * @param steadySeconds how long to measure the agent at steady state once all run; 0 for not at all
 */
record BenchOptions(
        int allocs,
        int tasks,
        boolean restart,
        Path agentJar,
        List<String> agentJvm,
        Path timeline,
        String driver,
        boolean httpCheck,
        int steadySeconds) {

    /** The steady window {@code --http-check} measures when {@code --steady} is not given. */
    static final int DEFAULT_CHECK_STEADY_SECONDS = 60;

    static final String MOCK = "mock";
    static final String RAW_EXEC = "raw_exec";

    boolean rawExec() {
        return RAW_EXEC.equals(driver);
    }

    static BenchOptions parse(String[] args) {
        int allocs = 100;
        int tasks = 2;
        boolean restart = false;
        Path jar = Path.of("operator", "target", "drover-agent.jar");
        List<String> jvm = null;
        Path timeline = null;
        String driver = MOCK;
        boolean httpCheck = false;
        Integer steady = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--allocs" -> allocs = positive(args, ++i, "--allocs");
                case "--tasks" -> tasks = positive(args, ++i, "--tasks");
                case "--restart" -> restart = true;
                case "--agent-jar" -> jar = Path.of(arg(args, ++i, "--agent-jar"));
                case "--agent-jvm" ->
                    jvm = List.of(arg(args, ++i, "--agent-jvm").trim().split("\\s+"));
                case "--timeline" -> timeline = Path.of(arg(args, ++i, "--timeline"));
                case "--driver" -> driver = driver(arg(args, ++i, "--driver"));
                case "--http-check" -> httpCheck = true;
                case "--steady" -> steady = positive(args, ++i, "--steady");
                default -> throw new Bench.UsageException("unknown flag \"" + args[i] + "\"");
            }
        }
        if (!Files.isRegularFile(jar)) {
            throw new Bench.UsageException(
                    "no agent jar at " + jar + " (build it with ./mvnw package, or give" + " --agent-jar)");
        }
        int steadySeconds = steady != null ? steady : httpCheck ? DEFAULT_CHECK_STEADY_SECONDS : 0;
        return new BenchOptions(allocs, tasks, restart, jar, jvm, timeline, driver, httpCheck, steadySeconds);
    }

    private static String driver(String value) {
        if (value.equals(MOCK) || value.equals(RAW_EXEC)) {
            return value;
        }
        String shown = value.length() > 40 ? value.substring(0, 40) + "..." : value;
        throw new Bench.UsageException(
                "--driver is mock or raw_exec, not \"" + shown.replaceAll("\\p{Cntrl}", "?") + "\"");
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
                                "  bench --allocs N --tasks M [--driver mock|raw_exec] [--restart] [--agent-jar FILE]",
                                "        [--agent-jvm \"OPTIONS\"] [--timeline CSV] [--http-check] [--steady S]",
                                "      Start the local API server and the agent jar (default operator/target/drover-agent.jar) as",
                                "      child processes, the agent with the image's JVM options (or OPTIONS), create N allocations of M",
                                "      tasks at once (mock tasks, or with raw_exec each a host /bin/sleep 3600, ended and their cgroups",
                                "      removed afterwards), and print one JSON line:",
                                "      allRunningSeconds, p50Seconds/p99Seconds (seen by the agent to Running),",
                                "      createToRunningP50Seconds/createToRunningP99Seconds, statusWrites, stateChanges,",
                                "      heapBytesPerAlloc, agentCpuSeconds, with raw_exec supervisorPssBytesPerTask, and with",
                                "      --restart restoreSeconds and restartsAfterRestore.",
                                "      --timeline writes each allocation's created, received, started and running times (ms) as CSV.",
                                "      --http-check gives each task one http check every 10 s (at a server of the bench's); --steady S",
                                "      (60 with --http-check) then measures S seconds once all run: steadyAgentCpuPercent,",
                                "      steadyStatusWritesPerMinute and steadyProbesPerSecond."))
                + "\n";
    }
}
