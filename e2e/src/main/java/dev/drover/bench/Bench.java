package dev.drover.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.Task;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * {@code drover-local bench --allocs N --tasks M [--driver mock|raw_exec] [--restart] [--delete]}: the load harness. The local
 * API server and the agent jar (node {@code local}) as child processes, N allocations of M tasks created through
 * the API at once; prints one JSON line of figures (docs/BENCHMARKS.md). Latency is measured as a user sees it:
 * from the create call returning to the first watch event showing the allocation Running.
 */
public final class Bench {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The node the API server lists and the agent runs as. */
    private static final String NODE = "local";
    /** How long an agent recording its AOT cache may take to exit: it assembles the cache first. */
    private static final Duration AOT_ASSEMBLY_WAIT = Duration.ofMinutes(10);
    /** The heap of an agent recording its AOT cache. */
    static final String AOT_RECORDING_HEAP = "-Xmx2g";

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

    /** A flag the bench does not know or a value it cannot use; drover-local prints it with its usage. */
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
     * Runs {@code bench ARGS}; {@code launcher} is the main class of drover-local, whose {@code apiserver} command
     * starts the API server and whose {@code bench} command this is.
     *
     * @throws UsageException for a flag it cannot use
     */
    public static int run(String[] args, PrintStream out, PrintStream err, String launcher) throws Exception {
        ChildJvms jvms = new ChildJvms(launcher);
        try (var children = new ChildrenOnExit()) {
            if (!ChildJvms.inLightJvm()) {
                return jvms.benchInLightJvm(args);
            }
            Bench bench = new Bench(BenchOptions.parse(args), jvms, out, err);
            try {
                int exit = bench.run();
                return exit == 0 && bench.options.aotOut() != null ? bench.recorded(bench.options.aotOut()) : exit;
            } finally {
                bench.http.close();
            }
        }
    }

    /** Whether the agent of an {@code --aot-out} run left its cache: 0 if so, else 1 with one line saying so. */
    private int recorded(Path cache) throws IOException {
        if (!agentEnded) {
            Files.deleteIfExists(cache); // what a killed assembly left is no cache
            err.println("bench: the agent did not finish its ahead-of-time cache within "
                    + AOT_ASSEMBLY_WAIT.toMinutes() + " minutes (its log: " + work.resolve("agent.log") + ")");
            return 1;
        }
        if (Files.isRegularFile(cache, java.nio.file.LinkOption.NOFOLLOW_LINKS) && Files.size(cache) > 0) {
            return 0;
        }
        err.println("bench: the agent recorded no ahead-of-time cache at " + cache + " (its log: "
                + work.resolve("agent.log") + ")");
        return 1;
    }

    /**
     * {@code --aot}: a training run of the agent (its own API server and data, up to
     * {@link BenchOptions#AOT_TRAINING_ALLOCS} allocations of this run's shape created, running and deleted) that
     * records the JVM's ahead-of-time cache as the agent exits; returns the cache.
     */
    private Path trainAot(Path work, List<String> agentJvm) throws IOException, InterruptedException {
        Path cache = work.resolve("agent.aot");
        List<String> args = new ArrayList<>(List.of(
                "--allocs",
                Integer.toString(Math.min(options.allocs(), BenchOptions.AOT_TRAINING_ALLOCS)),
                "--tasks",
                Integer.toString(options.tasks()),
                "--driver",
                options.driver(),
                "--events",
                options.taskEvents(),
                "--delete",
                "--agent-jar",
                options.agentJar().toString(),
                "--agent-jvm",
                String.join(" ", agentJvm),
                "--aot-out",
                cache.toString()));
        Path log = work.resolve("aot-training.log");
        int exit = jvms.benchChild(args, log);
        if (exit != 0 || !Files.isRegularFile(cache)) {
            throw new IOException(
                    "the agent's AOT training run (exit " + exit + ") recorded no cache; its log: " + log);
        }
        return cache;
    }

    /** The flags of {@code bench}, for drover-local's help. */
    public static java.util.List<dev.drover.cli.flags.Flag> flags() {
        return BenchOptions.FLAGS;
    }

    /** What {@code bench --help} says after its flags. */
    public static String details() {
        return BenchOptions.details();
    }

    private int run() throws Exception {
        work = Files.createTempDirectory("drover-bench");
        if (options.aotOut() != null) {
            Files.deleteIfExists(options.aotOut()); // an earlier run's cache must not pass for this one's
        }
        Path kubeconfig = work.resolve("kubeconfig");
        ChildJvms.Server server = jvms.startServer(kubeconfig, work, NODE, work.resolve("apiserver.log"));
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
            RawExecTasks tasks = options.rawExec() ? new RawExecTasks() : null;
            checks = options.httpCheck() ? new CheckTarget() : null;
            if (tasks != null) {
                agentArgs.addAll(List.of("--enable-raw-exec", "--cgroup-parent", tasks.cgroupParent()));
            }
            List<String> agentJvm = options.agentJvm() == null ? AgentJvm.options() : options.agentJvm();
            if (options.aot()) {
                agentJvm = new ArrayList<>(agentJvm);
                agentJvm.add("-XX:AOTCache=" + trainAot(work, agentJvm));
            }
            if (options.aotOut() != null) {
                agentJvm = new ArrayList<>(agentJvm);
                // a heap that fits compressed object pointers, as every agent under a memory limit below about 43 GB
                // runs: a cache recorded without them (a heap of a large machine's RAM) is refused by those agents
                agentJvm.add(AOT_RECORDING_HEAP);
                agentJvm.add("-XX:AOTCacheOutput=" + options.aotOut());
            }
            Process agent =
                    ChildJvms.startAgent(options.agentJar(), agentJvm, agentArgs, work.resolve("agent.log"), probe);
            RssPeak rss = new RssPeak(agent.pid());
            try {
                ObjectNode result = measure(client, agent, probe);
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
                    agent = ChildJvms.startAgent(
                            options.agentJar(), agentJvm, agentArgs, work.resolve("agent-restart.log"), probe);
                    rss.watch(agent.pid());
                    waitUntil(
                            () -> probe.runningAllocations() >= options.allocs(),
                            Duration.ofMinutes(5),
                            () -> (int) probe.runningAllocations(),
                            "reattached");
                    result.put("restoreSeconds", round((System.nanoTime() - restartBegin) / 1e9));
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
                agentEnded = ChildJvms.stop(agent, options.aotOut() == null ? ChildJvms.STOP_WAIT : AOT_ASSEMBLY_WAIT);
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
        createAll(created);
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
        String metrics = probe.metrics();
        ObjectNode result = JSON.createObjectNode();
        result.put("allocs", options.allocs()).put("tasksPerAlloc", options.tasks());
        result.put("taskEvents", options.taskEvents());
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

    /**
     * Creates the allocations from 16 threads at once, each a plain POST of its JSON (the bench plays the users; a
     * typed client's serializing and reading back every answer was CPU taken from the agent measured beside it).
     */
    private void createAll(Map<String, Long> created) throws Exception {
        URI collection = serverUrl.resolve("/apis/drover.dev/v1alpha1/namespaces/default/allocations");
        String template = JSON.writeValueAsString(allocation("NAME-PLACEHOLDER"));
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < options.allocs(); i++) {
                String name = "bench-" + i;
                String body = template.replace("NAME-PLACEHOLDER", name);
                sent.add(pool.submit(() -> {
                    HttpResponse<String> r = http.send(
                            HttpRequest.newBuilder(collection)
                                    .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() != 201) {
                        throw new IOException("creating " + name + ": HTTP " + r.statusCode() + " " + r.body());
                    }
                    created.put(name, System.nanoTime());
                    return null;
                }));
            }
            for (var f : sent) {
                f.get();
            }
        }
    }

    private Allocation allocation(String name) {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(NODE);
        List<Task> list = new ArrayList<>();
        for (int t = 0; t < options.tasks(); t++) {
            Task task = new Task();
            task.setName("task-" + t);
            if (options.rawExec()) {
                task.setDriver(BenchOptions.RAW_EXEC);
                task.setConfig(Map.of("command", "/bin/sleep", "args", List.of("3600")));
            } else {
                task.setDriver(BenchOptions.MOCK);
                task.setConfig(Map.of("runFor", "24h"));
            }
            if (checks != null) {
                Check check = new Check("http", CheckType.HTTP);
                check.setPort(checks.port());
                check.setPath(CheckTarget.PATH);
                check.setInterval("10s");
                task.setChecks(List.of(check));
            }
            list.add(task);
        }
        spec.setTasks(list);
        a.setSpec(spec);
        return a;
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
