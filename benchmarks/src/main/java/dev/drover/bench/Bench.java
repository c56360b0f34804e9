package dev.drover.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.local.LocalApiServer;
import dev.drover.local.LocalMain;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * {@code java -jar drover-bench.jar --allocs N --tasks M [--driver mock|raw_exec|oci] [--restart] [--delete]}: the load harness. The local
 * API server and the agent jar (node {@code local}) as child processes, N allocations of M tasks created through
 * the API at once; prints one JSON line of figures (docs/BENCHMARKS.md). Latency is measured as a user sees it:
 * from the create call returning to the first watch event showing the allocation Running.
 */
public final class Bench {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The node the API server lists and the agent runs as. */
    private static final String NODE = "local";

    private final BenchOptions options;
    private final ChildJvms jvms;
    private final PrintStream out;
    private final PrintStream err;
    private final boolean terminal = System.console() != null;
    /** One client for every create and every poll of the agent (each HttpClient has its own threads). */
    private HttpClient http = HttpClient.newHttpClient();

    private URI serverUrl;
    /** The local API server's process: its CPU is reported beside the agent's. */
    private Process serverProcess;
    /** This run's temporary directory: the API server's and the agent's data and logs. */
    private Path work;
    /** Whether the measured agent ended when asked to (an agent recording its AOT cache assembles it first). */
    private boolean agentEnded = true;
    /** What the tasks' http checks probe, with {@code --http-check}. */
    private CheckTarget checks;

    private javax.net.ssl.SSLContext serverTls;
    /** The agent's write requests as the API server counted them. */
    private ApiWrites apiWrites;
    /** The agent's writes from the first create until they were quiet after all ran. */
    private Map<String, Long> writesToRunning = Map.of();

    /** A flag the bench does not know or a value it cannot use; {@link BenchMain} prints it with its usage. */
    public static final class UsageException extends IllegalArgumentException {
        UsageException(String message) {
            super(message);
        }
    }

    private Bench(BenchOptions options, ChildJvms jvms, PrintStream out, PrintStream err) {
        this.options = options;
        this.jvms = jvms;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the bench with {@code ARGS}: the API server is drover-local's {@code apiserver}, from the same jar.
     *
     * @throws UsageException for a flag it cannot use
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        ChildJvms jvms = new ChildJvms(BenchMain.class.getName(), LocalMain.class.getName());
        try (var children = new ChildrenOnExit()) {
            if (!ChildJvms.inLightJvm()) {
                return jvms.benchInLightJvm(args);
            }
            Bench bench = new Bench(BenchOptions.parse(args), jvms, out, err);
            try {
                int exit = bench.run();
                return exit == 0 && bench.options.aotOut() != null
                        ? AotCache.recorded(
                                bench.options.aotOut(), bench.agentEnded, bench.work.resolve("agent.log"), err)
                        : exit;
            } finally {
                bench.http.close();
            }
        }
    }

    /** The flags of the bench, for its help. */
    public static java.util.List<dev.drover.cli.flags.Flag> flags() {
        return BenchOptions.FLAGS;
    }

    /** What {@code bench --help} says after its flags. */
    public static String details() {
        return BenchOptions.details();
    }

    private int run() throws Exception {
        if (options.bridge()) { // the agent would make its bridge, veths and rules in this namespace
            Optional<String> refusal = HostNetworkGuard.refusal(
                    HostNetworkGuard.SELF, HostNetworkGuard.INIT, HostNetworkGuard.interfacesUp());
            if (refusal.isPresent()) {
                throw new UsageException("--network bridge: " + refusal.get());
            }
        }
        work = Files.createTempDirectory("drover-bench");
        if (options.aotOut() != null) {
            Files.deleteIfExists(options.aotOut()); // an earlier run's cache must not pass for this one's
        }
        Path kubeconfig = work.resolve("kubeconfig");
        ChildJvms.Server server = jvms.startServer(
                kubeconfig, work, NODE, work.resolve("apiserver.log"), NodeSharingLoad.serverFlags(options));
        serverUrl = server.url();
        serverProcess = server.process();
        serverTls = LocalApiServer.trusting(kubeconfig);
        http.close();
        http = HttpClient.newBuilder().sslContext(serverTls).build(); // the agent's metrics stay plain HTTP
        apiWrites = new ApiWrites(http, serverUrl);
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withConfig(clientConfig(kubeconfig))
                .build()) {
            AgentProbe probe;
            try (var s = new ServerSocket(0)) {
                probe = new AgentProbe(http, s.getLocalPort());
            }
            List<String> agentArgs = new ArrayList<>(List.of(
                    "--kubeconfig",
                    work.resolve(NODE + ".kubeconfig").toString(),
                    "--node",
                    NODE,
                    "--data-dir",
                    work.resolve("data").toString(),
                    "--metrics-port",
                    Integer.toString(probe.port()),
                    "--api-port",
                    "0",
                    "--log-level",
                    "warn",
                    "--config",
                    agentConfig(work).toString()));
            agentArgs.addAll(NodeSharingLoad.agentFlags(options, client, NODE));
            RawExecTasks tasks = options.hostTasks() ? new RawExecTasks() : null;
            checks = options.httpCheck() ? new CheckTarget() : null;
            if (tasks != null) {
                agentArgs.addAll(tasks.agentFlags(options));
            }
            if (options.bridge()) {
                String bin = System.getenv("DROVER_CNI_BIN_DIR");
                agentArgs.addAll(List.of("--cni-bin-dir", bin == null || bin.isBlank() ? "/usr/lib/cni" : bin));
            }
            if (options.oci()) { // into the store the agent opens: its tasks start from a cached image
                ImagePulls.pull(work.resolve("data").resolve("images"), options.image(), options.registryCaFile());
            }
            List<String> agentJvm = AotCache.agentJvm(
                    options, jvms, work, options.agentJvm() == null ? AgentJvm.options() : options.agentJvm());
            long agentBegin = System.nanoTime();
            Process agent =
                    ChildJvms.startAgent(options.agentJar(), agentJvm, agentArgs, work.resolve("agent.log"), probe);
            double agentReady = (System.nanoTime() - agentBegin) / 1e9;
            RssPeak rss = new RssPeak(agent.pid());
            try {
                ObjectNode result = measure(client, agent, probe);
                result.put("agentReadySeconds", round(agentReady));
                if (options.steadySeconds() > 0) {
                    SteadyState.measure(
                            result, agent, probe, checks, apiWrites, Duration.ofSeconds(options.steadySeconds()));
                }
                long droppedBefore = 0; // Events an agent stopped below dropped
                if (tasks != null) {
                    tasks.record(agent.toHandle());
                }
                if (options.restart()) {
                    droppedBefore += eventsDropped(probe);
                    ChildJvms.stop(agent);
                    long restartBegin = System.nanoTime();
                    Path restartLog = work.resolve("agent-restart.log");
                    agent = ChildJvms.launchAgent(options.agentJar(), agentJvm, agentArgs, restartLog);
                    rss.watch(agent.pid());
                    Process restarted = agent;
                    // every task supervised again, counted Running by the agent, whether or not it is ready yet
                    waitUntil(
                            () -> restarted.isAlive() && probe.runningAllocations() >= options.allocs(),
                            Duration.ofMinutes(5),
                            () -> (int) probe.runningAllocations(),
                            "reattached");
                    result.put("restoreSeconds", round((System.nanoTime() - restartBegin) / 1e9));
                    ChildJvms.awaitReady(agent, restartLog, probe);
                    result.put("restoreReadySeconds", round((System.nanoTime() - restartBegin) / 1e9));
                    Thread.sleep(1000);
                    long restarts = client.resources(Allocation.class).inNamespace("default").list().getItems().stream()
                            .mapToLong(
                                    a -> a.getStatus() == null || a.getStatus().getRestarts() == null
                                            ? 0
                                            : a.getStatus().getRestarts())
                            .sum();
                    result.put("restartsAfterRestore", restarts);
                }
                Map<String, Long> writes = writesToRunning;
                if (options.delete()) {
                    Map<String, Long> before = apiWrites.read();
                    double seconds = DeletePhase.run(
                            http,
                            serverTls,
                            serverUrl,
                            options.allocs(),
                            gone -> waitUntil(
                                    () -> gone.size() >= options.allocs(), Duration.ofMinutes(5), gone::size, "gone"));
                    result.put("deleteAllSeconds", round(seconds));
                    writes = ApiWrites.plus(writes, ApiWrites.between(before, apiWrites.readOnceQuiet()));
                }
                ApiWrites.put(result, writes, options.allocs());
                result.put("eventsDropped", droppedBefore + eventsDropped(probe));
                result.put("agentRssBytes", rss.peakBytes());
                if (terminal) {
                    err.println();
                }
                out.println(JSON.writeValueAsString(result));
                return 0;
            } finally {
                rss.close();
                if (tasks != null) {
                    endTasks(client, tasks, agent);
                }
                // an agent recording its AOT cache assembles it as it exits, which takes a while
                agentEnded = ChildJvms.stop(agent, AotCache.stopWait(options));
                if (checks != null) {
                    checks.close();
                }
                if (tasks != null && tasks.endLeftovers() > 0) {
                    err.println("bench: killed task processes the agent left");
                }
            }
        } finally {
            ChildJvms.stop(server.process());
        }
    }

    /**
     * Deletes the allocations and waits for the agent to end their tasks (each a host process that would outlive the
     * agent); what is still there after that is killed by {@link RawExecTasks#endLeftovers}.
     */
    private void endTasks(KubernetesClient client, RawExecTasks tasks, Process agent) throws InterruptedException {
        List<Allocation> all;
        try {
            all = client.resources(Allocation.class)
                    .inNamespace("default")
                    .list()
                    .getItems();
        } catch (RuntimeException e) {
            err.println("bench: listing the allocations to delete failed: " + causes(e));
            all = List.of();
        }
        int failed = 0;
        for (Allocation a : all) {
            String name = a.getMetadata().getName();
            for (int attempt = 1; ; attempt++) {
                try {
                    client.resources(Allocation.class)
                            .inNamespace("default")
                            .withName(name)
                            .delete();
                    break;
                } catch (RuntimeException e) {
                    if (attempt == 3) {
                        if (failed++ == 0) {
                            err.println("bench: deleting " + name + " failed: " + causes(e));
                        }
                        break;
                    }
                    Thread.sleep(200L * attempt); // a busy API server: try again shortly
                }
            }
        }
        if (failed > 0) {
            err.println("bench: " + failed + " allocation(s) could not be deleted; their tasks are killed below");
        }
        if (agent.isAlive()) {
            tasks.awaitEnd(agent.toHandle(), Duration.ofMinutes(2));
        }
    }

    /** The message of {@code e} and of each of its causes: fabric8's own message names only the operation. */
    private static String causes(Throwable e) {
        StringBuilder text = new StringBuilder(String.valueOf(e.getMessage()));
        for (Throwable c = e.getCause(); c != null && text.length() < 2000; c = c.getCause()) {
            text.append(": ").append(c);
        }
        return text.toString();
    }

    /** Creates the allocations, waits until all run and measures how long that took and what it cost. */
    private ObjectNode measure(KubernetesClient client, Process agent, AgentProbe probe) throws Exception {
        boolean heapMeasured = AgentProbe.canCollect(); // jcmd forces the collection: a JDK's, not a runtime's
        double idleHeap = heapMeasured ? probe.heapAfterGc(agent.pid()) : 0;
        Map<String, Long> created = new ConcurrentHashMap<>();
        Map<String, Long> running = new ConcurrentHashMap<>();
        RunningWatch watch = new RunningWatch(serverTls, serverUrl, running, new ConcurrentHashMap<>());
        Map<String, Long> writesBefore = apiWrites.read();
        Duration cpuBefore = cpu(agent.toHandle());
        Duration serverCpuBefore = cpu(serverProcess.toHandle());
        Duration benchCpuBefore = cpu(ProcessHandle.current());
        long begin = System.nanoTime();
        Instant beginWall = Instant.now();
        new CreatePhase(options, NODE, checks).run(http, serverUrl, created);
        waitUntil(() -> running.size() >= options.allocs(), Duration.ofMinutes(5), running::size, "Running");
        double allRunning = (System.nanoTime() - begin) / 1e9;
        watch.close();
        List<Double> latencies = new ArrayList<>();
        created.forEach((name, at) -> latencies.add((running.getOrDefault(name, at) - at) / 1e9));
        latencies.sort(Double::compare);
        Thread.sleep(2000); // let batched status writes land before counting them
        List<Allocation> listed =
                client.resources(Allocation.class).inNamespace("default").list().getItems();
        List<Double> seenToRunning = Timeline.seenToRunning(listed);
        if (options.timeline() != null) {
            Timeline.write(options.timeline(), listed, created, running, begin, beginWall);
        }
        Duration agentCpu = cpu(agent.toHandle()).minus(cpuBefore);
        Duration serverCpu = cpu(serverProcess.toHandle()).minus(serverCpuBefore);
        Duration benchCpu = cpu(ProcessHandle.current()).minus(benchCpuBefore);
        long supervisorPss = options.rawExec() ? RawExecTasks.supervisorPssPerTask(agent.toHandle()) : 0;
        RawExecTasks.Memory taskMemory = options.hostTasks() ? RawExecTasks.descendants(agent.toHandle()) : null;
        String metrics = probe.metrics();
        ObjectNode result = JSON.createObjectNode();
        result.put("allocs", options.allocs()).put("tasksPerAlloc", options.tasks());
        result.put("taskEvents", options.taskEvents()).put("kubeVersion", options.kubeVersion());
        if (options.bridge()) {
            result.put("network", BenchOptions.BRIDGE);
        }
        if (options.aot()) {
            result.put("aot", true);
        }
        result.put("allRunningSeconds", round(allRunning));
        result.put("p50Seconds", round(Timeline.percentile(seenToRunning, 0.50)));
        result.put("p99Seconds", round(Timeline.percentile(seenToRunning, 0.99)));
        result.put("createToRunningP50Seconds", round(Timeline.percentile(latencies, 0.50)));
        result.put("createToRunningP99Seconds", round(Timeline.percentile(latencies, 0.99)));
        long writes = (long) AgentProbe.sum(metrics, "drover_status_writes_total\\{result=\"written\",?\\}");
        long changes = (long) AgentProbe.sum(metrics, "drover_task_events_total\\{[^}]*\\}");
        result.put("statusWrites", writes).put("stateChanges", changes);
        if (heapMeasured) {
            double heap = probe.heapAfterGc(agent.pid());
            result.put("heapBytesPerAlloc", Math.round((heap - idleHeap) / options.allocs()));
            result.put("heapIdleBytes", Math.round(idleHeap));
        }
        result.put("agentCpuSeconds", round(agentCpu.toNanos() / 1e9));
        result.put("apiServerCpuSeconds", round(serverCpu.toNanos() / 1e9));
        result.put("benchCpuSeconds", round(benchCpu.toNanos() / 1e9));
        if (options.rawExec()) {
            result.put("supervisorPssBytesPerTask", supervisorPss);
        }
        if (taskMemory != null) {
            int tasks = options.allocs() * options.tasks();
            result.put("taskProcesses", taskMemory.processes());
            result.put("taskPssBytesPerTask", taskMemory.pssBytes() / tasks);
            result.put("taskRssBytesPerTask", taskMemory.rssBytes() / tasks);
        }
        NodeSharingLoad.put(result, options, metrics, listed, created, begin, beginWall);
        writesToRunning = ApiWrites.between(writesBefore, apiWrites.readOnceQuiet());
        return result;
    }

    /** The agent's configuration file: what the flags do not say ({@code --events}). */
    private Path agentConfig(Path work) throws IOException {
        return Files.writeString(work.resolve("agent.yaml"), "events: {taskEvents: " + options.taskEvents() + "}\n");
    }

    /** The administrator's kubeconfig the local API server wrote, with no retries: a failed call is a failed run. */
    private static Config clientConfig(Path kubeconfig) throws IOException {
        Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
        config.setRequestRetryBackoffLimit(0);
        return config;
    }

    private void waitUntil(BooleanSupplier done, Duration timeout, IntSupplier progress, String what)
            throws InterruptedException {
        int allocs = options.allocs();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + progress.getAsInt() + " of " + allocs + " allocations " + what
                        + " after " + timeout.toSeconds() + " s");
            }
            if (terminal) {
                int n = progress.getAsInt();
                int width = 40;
                int filled = (int) ((long) n * width / allocs);
                err.print(
                        "\r[" + "#".repeat(filled) + " ".repeat(width - filled) + "] " + n + "/" + allocs + " " + what);
                err.flush();
            }
            Thread.sleep(50);
        }
    }

    /** Kubernetes Events the agent dropped so far (its queue full, or an allocation past its rate). */
    private static long eventsDropped(AgentProbe probe) {
        return (long) AgentProbe.sum(probe.metrics(), "drover_kube_events_total\\{result=\"dropped\",?\\}");
    }

    /** The CPU time (user and system) {@code process} (the agent, the API server, this bench) has used so far. */
    static Duration cpu(ProcessHandle process) {
        return process.info().totalCpuDuration().orElse(Duration.ZERO);
    }

    static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }
}
