package dev.drover.bench;

import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.UsageError;
import dev.drover.common.UserText;
import dev.drover.image.ImageReference;
import dev.drover.local.LocalApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The flags of {@code bench}.
 *
 * @param agentJvm the agent's JVM options; null: the image's ({@link AgentJvm})
 * @param timeline where to write each allocation's timeline as CSV, or null
 * @param driver the tasks' driver: {@code mock}, {@code raw_exec} (each task a host {@code /bin/sleep}), or
 *     {@code oci} (each task a container of {@code image} running its {@code /bin/sleep})
 * @param httpCheck whether each task has one http check every 10 s (at the bench's {@link CheckTarget})
 * @param steadySeconds how long to measure the agent at steady state once all run; 0 for not at all
 * @param delete whether to delete every allocation at the end and time until all are gone
 * @param taskEvents the agent's {@code events.taskEvents}: {@code folded} (its default), {@code all} or {@code notable}
 * @param aot whether the measured agent starts with an ahead-of-time cache recorded by a training run first
 * @param aotOut where the agent records its ahead-of-time cache as it exits (the image build's training run), or
 *     null
 * @param image with {@code oci}: the image every task runs, pulled into the agent's image store before it starts;
 *     else null
 * @param registryCaFile with {@code oci}: a CA the image's registry's certificate may chain to, or null
 * @param network every allocation's {@code spec.network.mode}: {@code host} (no {@code spec.network}) or
 *     {@code bridge} (with one port, {@code http}, its host port the agent's pick)
 * @param nodeSharing the agent's {@code nodeSharing}, {@code resize} or {@code dedicated}, on a node large enough for
 *     the load (Kubernetes 1.35 for resize) and tasks that request CPU and memory ({@link NodeSharingLoad}); null:
 *     as the agent chooses, the tasks requesting nothing
 * @param kubeVersion the Kubernetes version the local API server acts as: {@code --kube-version}, else the newest it
 *     acts as; with {@code --node-sharing}, that mode's (1.35 for resize, 1.32 for dedicated)
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
        int steadySeconds,
        boolean delete,
        String taskEvents,
        boolean aot,
        Path aotOut,
        String image,
        Path registryCaFile,
        String network,
        String nodeSharing,
        String kubeVersion) {

    /** The steady window {@code --http-check} measures when {@code --steady} is not given. */
    static final int DEFAULT_CHECK_STEADY_SECONDS = 60;

    static final String MOCK = "mock";
    static final String RAW_EXEC = "raw_exec";
    static final String OCI = "oci";
    static final String HOST = "host";
    static final String BRIDGE = "bridge";
    static final String RESIZE = "resize";
    static final String DEDICATED = "dedicated";

    boolean rawExec() {
        return RAW_EXEC.equals(driver);
    }

    boolean oci() {
        return OCI.equals(driver);
    }

    boolean bridge() {
        return BRIDGE.equals(network);
    }

    /** Whether the tasks are processes on the host (raw_exec, or oci's monitors, runtimes and containers). */
    boolean hostTasks() {
        return rawExec() || oci();
    }

    static final Flag ALLOCS = Flag.valued("--allocs", null, "N", "how many allocations (default 100)");
    static final Flag TASKS = Flag.valued("--tasks", null, "M", "tasks per allocation (default 2)");
    static final Flag DRIVER = Flag.valued(
            "--driver",
            null,
            "mock|raw_exec|oci",
            "the tasks' driver; raw_exec tasks are host /bin/sleep 3600, oci tasks containers of --image running"
                    + " its /bin/sleep 3600, ended and their cgroups removed afterwards (default mock)");
    static final Flag IMAGE = Flag.valued(
            "--image",
            null,
            "REF",
            "with --driver oci: the image the tasks run (it needs /bin/sleep), pulled into the agent's store"
                    + " before the agent starts, so the tasks start from a cached image");
    static final Flag REGISTRY_CA = Flag.valued(
            "--registry-ca-file",
            null,
            "FILE",
            "with --driver oci: a CA (PEM) the image's registry's certificate may chain to, for the pull and the"
                    + " agent's --registry-ca-file");
    static final Flag RESTART = Flag.on(
            "--restart",
            null,
            "restarts the agent once all run and measures"
                    + " restoreSeconds, restoreReadySeconds and restartsAfterRestore");
    static final Flag AGENT_JAR =
            Flag.valued("--agent-jar", null, "FILE", "the agent jar (default" + " operator/target/drover-agent.jar)");
    static final Flag AGENT_JVM =
            Flag.valued("--agent-jvm", null, "\"OPTIONS\"", "the agent's JVM options (default" + " the image's)");
    static final Flag TIMELINE = Flag.valued(
            "--timeline",
            null,
            "CSV",
            "writes each allocation's created, received," + " started and running times (ms) as CSV");
    static final Flag HTTP_CHECK = Flag.on(
            "--http-check", null, "gives each task one http check every 10 s (at a" + " server of the bench's)");
    static final Flag STEADY = Flag.valued(
            "--steady",
            null,
            "S",
            "then measures S seconds once all run (default 60" + " with --http-check, else none)");

    static final Flag DELETE = Flag.on(
            "--delete",
            null,
            "at the end deletes every allocation and measures deleteAllSeconds; apiWritesPerAllocation then counts"
                    + " the whole life, create to gone");

    static final Flag EVENTS = Flag.valued(
            "--events",
            null,
            "folded|all|notable",
            "the agent's events.taskEvents: every Warning an Event and an allocation's Normal task events of a few"
                    + " seconds one (folded), every task event an Event (all), or Warnings only (notable)"
                    + " (default folded, the agent's default)");

    static final Flag NETWORK = Flag.valued(
            "--network",
            null,
            "MODE",
            "host (default) or bridge: each allocation's spec.network.mode, bridge with one port; run bridge in a"
                    + " network namespace of its own (benchmarks/network-bench.sh 3 e2e)");
    static final Flag AOT = Flag.on(
            "--aot",
            null,
            "first records the agent's ahead-of-time cache in a training run (up to "
                    + "300 allocations created, running and deleted), then measures an agent started with it");

    static final Flag AOT_OUT = Flag.valued(
            "--aot-out",
            null,
            "FILE",
            "the agent (its heap at most 2 GB) records its ahead-of-time cache into FILE as it exits: a training run"
                    + " (the image build's)");

    static final Flag NODE_SHARING = Flag.valued(
            "--node-sharing",
            null,
            "resize|dedicated",
            "the agent's nodeSharing, on a node of " + NodeSharingLoad.NODE_ALLOCATABLE
                    + " (Kubernetes 1.35 for resize, 1.32 for dedicated), each task requesting "
                    + NodeSharingLoad.TASK_CPU_MILLIS
                    + "m CPU and " + NodeSharingLoad.TASK_MEMORY_MB + " MB (default: neither, the agent's choice,"
                    + " the tasks requesting nothing)");

    static final Flag KUBE_VERSION = Flag.valued(
            "--kube-version",
            null,
            "1.N",
            "the Kubernetes version the local API server acts as (default the newest it acts as, "
                    + LocalApiServer.NEWEST_KUBE_VERSION + "; --node-sharing sets its own)");

    /** The most allocations the {@code --aot} training run creates. */
    static final int AOT_TRAINING_ALLOCS = 300;

    static final List<Flag> FLAGS = List.of(
            ALLOCS,
            TASKS,
            DRIVER,
            RESTART,
            AGENT_JAR,
            AGENT_JVM,
            TIMELINE,
            HTTP_CHECK,
            STEADY,
            DELETE,
            EVENTS,
            AOT,
            AOT_OUT,
            IMAGE,
            REGISTRY_CA,
            NETWORK,
            NODE_SHARING,
            KUBE_VERSION);

    static BenchOptions parse(String[] args) {
        ParsedArgs p;
        try {
            p = FlagParser.parse(FLAGS, List.of(args), false);
        } catch (UsageError e) {
            throw new Bench.UsageException(e.getMessage());
        }
        if (!p.positional().isEmpty()) {
            throw new Bench.UsageException(
                    "bench takes flags only, not \"" + p.positional().getFirst() + "\"");
        }
        int allocs = positive(p, ALLOCS, 100);
        int tasks = positive(p, TASKS, 2);
        boolean restart = p.has(RESTART.name());
        Path jar = Path.of(
                p.value(AGENT_JAR.name()) == null ? "operator/target/drover-agent.jar" : p.value(AGENT_JAR.name()));
        List<String> jvm = p.value(AGENT_JVM.name()) == null
                ? null
                : List.of(p.value(AGENT_JVM.name()).trim().split("\\s+"));
        Path timeline = p.value(TIMELINE.name()) == null ? null : Path.of(p.value(TIMELINE.name()));
        String driver = p.value(DRIVER.name()) == null ? MOCK : driver(p.value(DRIVER.name()));
        String taskEvents = p.value(EVENTS.name()) == null ? "folded" : taskEvents(p.value(EVENTS.name()));
        boolean httpCheck = p.has(HTTP_CHECK.name());
        Integer steady = p.has(STEADY.name()) ? positive(p, STEADY, 0) : null;
        if (!Files.isRegularFile(jar)) {
            throw new Bench.UsageException(
                    "no agent jar at " + jar + " (build it with ./mvnw package, or give" + " --agent-jar)");
        }
        int steadySeconds = steady != null ? steady : httpCheck ? DEFAULT_CHECK_STEADY_SECONDS : 0;
        Path aotOut = aotOut(p, restart);
        String image = image(p, driver);
        Path ca = registryCa(p, driver);
        String network = network(p, driver);
        return new BenchOptions(
                allocs,
                tasks,
                restart,
                jar,
                jvm,
                timeline,
                driver,
                httpCheck,
                steadySeconds,
                p.has(DELETE.name()),
                taskEvents,
                p.has(AOT.name()),
                aotOut,
                image,
                ca,
                network,
                nodeSharing(p.value(NODE_SHARING.name())),
                kubeVersion(p));
    }

    /**
     * {@code --kube-version}, checked as the local API server checks it; else the newest it acts as. {@code
     * --node-sharing} chooses its own (the chart and the agent's mode depend on it), so the two do not go together.
     */
    private static String kubeVersion(ParsedArgs p) {
        String value = p.value(KUBE_VERSION.name());
        String sharing = nodeSharing(p.value(NODE_SHARING.name()));
        if (sharing != null) {
            if (value != null) {
                throw new Bench.UsageException("--kube-version does not go with --node-sharing, which runs its own"
                        + " (1.35 for resize, 1.32 for dedicated)");
            }
            return sharing.equals(RESIZE) ? NodeSharingLoad.KUBE_VERSION : NodeSharingLoad.DEDICATED_KUBE_VERSION;
        }
        if (value == null) {
            return LocalApiServer.NEWEST_KUBE_VERSION;
        }
        try {
            LocalApiServer.Options.defaults().withKubeVersion(value);
        } catch (IllegalArgumentException e) {
            throw new Bench.UsageException("--kube-version: " + e.getMessage());
        }
        return value;
    }

    /** {@code --node-sharing}: resize, dedicated, or null when not given. */
    private static String nodeSharing(String value) {
        if (value == null || value.equals(RESIZE) || value.equals(DEDICATED)) {
            return value;
        }
        throw new Bench.UsageException("--node-sharing is resize or dedicated, not " + UserText.quote(value));
    }

    /** {@code --network}: host or bridge; raw_exec tasks run in the node's network only. */
    private static String network(ParsedArgs p, String driver) {
        String value = p.value(NETWORK.name());
        if (value == null || value.equals(HOST)) {
            return HOST;
        }
        if (!value.equals(BRIDGE)) {
            throw new Bench.UsageException("--network is host or bridge, not " + UserText.quote(value));
        }
        if (RAW_EXEC.equals(driver)) {
            throw new Bench.UsageException("--network bridge is for mock and oci tasks: raw_exec runs in the node's");
        }
        return value;
    }

    /** {@code --image}: a valid reference, required with {@code --driver oci} and refused with any other. */
    private static String image(ParsedArgs p, String driver) {
        String value = p.value(IMAGE.name());
        if (!OCI.equals(driver)) {
            if (value != null) {
                throw new Bench.UsageException("--image is for --driver oci");
            }
            return null;
        }
        if (value == null) {
            throw new Bench.UsageException("--driver oci needs --image REF");
        }
        try {
            ImageReference.parse(value);
        } catch (IllegalArgumentException e) {
            throw new Bench.UsageException("--image: " + e.getMessage());
        }
        return value;
    }

    /** {@code --registry-ca-file}: a file that exists, with {@code --driver oci} only. */
    private static Path registryCa(ParsedArgs p, String driver) {
        String value = p.value(REGISTRY_CA.name());
        if (value == null) {
            return null;
        }
        if (!OCI.equals(driver)) {
            throw new Bench.UsageException("--registry-ca-file is for --driver oci");
        }
        Path file = Path.of(value).toAbsolutePath();
        if (!Files.isRegularFile(file)) {
            throw new Bench.UsageException("--registry-ca-file names no file: " + UserText.quote(value));
        }
        return file;
    }

    /** {@code --aot-out}: one agent's run, into a directory that exists; not with an agent that starts twice. */
    private static Path aotOut(ParsedArgs p, boolean restart) {
        if (p.value(AOT_OUT.name()) == null) {
            return null;
        }
        if (restart || p.has(AOT.name())) {
            throw new Bench.UsageException("--aot-out records one agent's cache: not with --restart or --aot");
        }
        String value = p.value(AOT_OUT.name());
        if (value.contains("%") || value.contains(":")) {
            // the JVM expands %p and %t in it, and refuses a path with ':'
            throw new Bench.UsageException("--aot-out takes a path without '%' or ':'");
        }
        Path out = Path.of(value).toAbsolutePath();
        if (Files.isDirectory(out, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new Bench.UsageException("--aot-out names a file, not the directory " + out);
        }
        Path parent = out.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new Bench.UsageException("--aot-out names a file in a directory that exists, not " + out);
        }
        return out;
    }

    private static String taskEvents(String value) {
        if (value.equals("folded") || value.equals("all") || value.equals("notable")) {
            return value;
        }
        String shown = value.length() > 40 ? value.substring(0, 40) + "..." : value;
        throw new Bench.UsageException(
                "--events is folded, all or notable, not \"" + shown.replaceAll("\\p{Cntrl}", "?") + "\"");
    }

    private static String driver(String value) {
        if (value.equals(MOCK) || value.equals(RAW_EXEC) || value.equals(OCI)) {
            return value;
        }
        String shown = value.length() > 40 ? value.substring(0, 40) + "..." : value;
        throw new Bench.UsageException(
                "--driver is mock, raw_exec or oci, not \"" + shown.replaceAll("\\p{Cntrl}", "?") + "\"");
    }

    private static int positive(ParsedArgs p, Flag flag, int otherwise) {
        String value = p.value(flag.name());
        if (value == null) {
            return otherwise;
        }
        try {
            int n = Integer.parseInt(value);
            if (n < 1) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new Bench.UsageException(flag.name() + " needs a positive whole number");
        }
    }

    /** What {@code bench --help} says after its flags. */
    static String details() {
        return """
                Starts the local API server and the agent jar as child processes, the agent with the image's JVM
                options (or --agent-jvm), creates N allocations of M tasks at once, and prints one JSON line:
                allRunningSeconds, p50Seconds/p99Seconds (seen by the agent to Running),
                createToRunningP50Seconds/createToRunningP99Seconds, statusWrites, stateChanges,
                heapBytesPerAlloc, agentCpuSeconds (with apiServerCpuSeconds and benchCpuSeconds: the local API
                server's and the bench's own CPU over the same time, as the three share the machine's cores; a
                raw_exec task's own CPU is in none of them), agentRssBytes (peak), eventsDropped, apiWrites (the
                agent's write requests by verb and resource, as the API server counted them) and
                apiWritesPerAllocation (from the first create until all run, with --delete until all are gone),
                taskEvents (--events), with raw_exec supervisorPssBytesPerTask, with raw_exec or oci taskProcesses,
                taskPssBytesPerTask and taskRssBytesPerTask (every process below the agent: monitors, runtimes,
                containers), with --node-sharing nodeSharing, createToTakenOnP50Seconds/createToTakenOnP99Seconds,
                reservationResizes and resizesPer100Allocations, with --restart restoreSeconds,
                restoreReadySeconds and restartsAfterRestore, with --delete deleteAllSeconds, with --steady steadyAgentCpuPercent,
                steadyStatusWritesPerMinute, steadyApiWritesPerMinute and steadyProbesPerSecond, and with --aot
                aot: true. Without jcmd (a Java runtime, not a JDK) the heap is not measured: heapBytesPerAlloc and
                heapIdleBytes are left out. The API server's and the agent's data and logs are kept in a new
                directory drover-bench... in Java's temporary directory (java -Djava.io.tmpdir=DIR to choose it).
                """;
    }
}
