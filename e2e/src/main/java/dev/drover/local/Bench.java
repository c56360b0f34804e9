package dev.drover.local;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.Timestamps;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code bench --allocs N --tasks M [--restart]}: the local API server in this
 * process, the agent jar as a child process (node {@code local}, mock driver),
 * N allocations of M mock tasks created through the API at once; prints one JSON
 * line of figures (docs/BENCHMARKS.md). Latency is measured as a user sees it:
 * from the create call returning to the first watch event showing the
 * allocation Running.
 */
final class Bench {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final int allocs;
    private final int tasks;
    private final boolean restart;
    private final Path agentJar;
    private final List<String> agentJvm;
    private final PrintStream out;
    private final PrintStream err;
    /** Where to write each allocation's timeline as CSV, or null. */
    private final Path timeline;
    private final boolean terminal = System.console() != null;
    /** One client for every poll of the agent's port (each HttpClient has its own threads). */
    private final HttpClient http = HttpClient.newHttpClient();
    private URI serverUrl;

    /**
     * The local API server's JVM: one compiler tier and the serial collector. It serves for the one run, and C2's
     * compiling would come out of the two cores the agent is measured on, as a real API server's would not.
     */
    static final List<String> SERVER_JVM = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

    Bench(int allocs, int tasks, boolean restart, Path agentJar, List<String> agentJvm, Path timeline, PrintStream out,
          PrintStream err) {
        this.timeline = timeline;
        this.allocs = allocs;
        this.tasks = tasks;
        this.restart = restart;
        this.agentJar = agentJar;
        this.agentJvm = List.copyOf(agentJvm);
        this.out = out;
        this.err = err;
    }

    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        if (!ManagementFactory.getRuntimeMXBean().getInputArguments().containsAll(SERVER_JVM)) {
            return inLightJvm(args);
        }
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
                case "--agent-jvm" -> jvm = List.of(arg(args, ++i, "--agent-jvm").trim().split("\\s+"));
                case "--timeline" -> timeline = Path.of(arg(args, ++i, "--timeline"));
                default -> throw new LocalMain.UsageException("unknown flag \"" + args[i] + "\"");
            }
        }
        if (!Files.isRegularFile(jar)) {
            throw new LocalMain.UsageException("no agent jar at " + jar + " (build it with ./mvnw package, or give"
                    + " --agent-jar)");
        }
        Bench bench = new Bench(allocs, tasks, restart, jar, jvm == null ? AgentJvm.options() : jvm, timeline, out,
                err);
        try {
            return bench.run();
        } finally {
            bench.http.close();
        }
    }

    /**
     * Runs the bench again in a JVM of its own with {@link #SERVER_JVM}, its output passed through: the bench plays
     * the users, and with the JVM's defaults its C2 compiler took half as much CPU again as the agent it measures,
     * on the same two cores.
     */
    private static int inLightJvm(String[] args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(SERVER_JVM);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), LocalMain.class.getName(), "bench"));
        command.addAll(Arrays.asList(args));
        Process bench = new ProcessBuilder(command).inheritIO().start();
        try {
            return bench.waitFor();
        } finally {
            bench.destroy();
        }
    }

    private static String arg(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new LocalMain.UsageException(flag + " needs a value");
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
            throw new LocalMain.UsageException(flag + " needs a positive whole number");
        }
    }

    private int run() throws Exception {
        Path work = Files.createTempDirectory("drover-bench");
        Path kubeconfig = work.resolve("kubeconfig");
        Process server = startServer(kubeconfig, work.resolve("apiserver.log"));
        try (KubernetesClient client = new KubernetesClientBuilder().withHttpClientFactory(new JdkHttpClientFactory())
                .withConfig(LocalApiServer.clientConfig(serverUrl)).build()) {
            int metricsPort;
            try (var s = new java.net.ServerSocket(0)) {
                metricsPort = s.getLocalPort();
            }
            List<String> agentArgs = List.of("--kubeconfig", kubeconfig.toString(), "--node",
                    LocalMain.LOCAL_NODE, "--data-dir", work.resolve("data").toString(), "--metrics-port",
                    Integer.toString(metricsPort), "--api-port", "0", "--log-level", "warn");
            Process agent = startAgent(agentArgs, work.resolve("agent.log"), metricsPort);
            try {
                double idleHeap = heapAfterGc(agent.pid(), metricsPort);
                Map<String, Long> created = new ConcurrentHashMap<>();
                Map<String, Long> running = new ConcurrentHashMap<>();
                RunningWatch watch = new RunningWatch(serverUrl, running);
                long begin = System.nanoTime();
                Instant beginWall = Instant.now();
                createAll(created);
                waitUntil(() -> running.size() >= allocs, Duration.ofMinutes(5), running::size, "Running");
                double allRunning = (System.nanoTime() - begin) / 1e9;
                watch.close();
                List<Double> latencies = new ArrayList<>();
                created.forEach((name, at) -> latencies.add((running.getOrDefault(name, at) - at) / 1e9));
                latencies.sort(Double::compare);
                Thread.sleep(2000); // let batched status writes land before counting them
                List<Allocation> listed = client.resources(Allocation.class).inNamespace("default").list().getItems();
                List<Double> seenToRunning = seenToRunning(listed);
                if (timeline != null) {
                    writeTimeline(listed, created, running, begin, beginWall);
                }
                String metrics = scrape(metricsPort);
                ObjectNode result = JSON.createObjectNode();
                result.put("allocs", allocs).put("tasksPerAlloc", tasks);
                result.put("allRunningSeconds", round(allRunning));
                result.put("p50Seconds", round(percentile(seenToRunning, 0.50)));
                result.put("p99Seconds", round(percentile(seenToRunning, 0.99)));
                result.put("createToRunningP50Seconds", round(percentile(latencies, 0.50)));
                result.put("createToRunningP99Seconds", round(percentile(latencies, 0.99)));
                long writes = (long) sum(metrics, "drover_status_writes_total\\{result=\"written\",?\\}");
                long changes = (long) sum(metrics, "drover_task_events_total\\{[^}]*\\}");
                result.put("statusWrites", writes).put("stateChanges", changes);
                double heap = heapAfterGc(agent.pid(), metricsPort);
                result.put("heapBytesPerAlloc", Math.round((heap - idleHeap) / allocs));
                result.put("heapIdleBytes", Math.round(idleHeap));
                if (restart) {
                    agent.destroy();
                    agent.waitFor(60, TimeUnit.SECONDS);
                    long restartBegin = System.nanoTime();
                    agent = startAgent(agentArgs, work.resolve("agent-restart.log"), metricsPort);
                    waitUntil(() -> runningAllocations(metricsPort) >= allocs, Duration.ofMinutes(5),
                            () -> (int) runningAllocations(metricsPort), "reattached");
                    result.put("restoreSeconds", round((System.nanoTime() - restartBegin) / 1e9));
                    Thread.sleep(1000);
                    long restarts = client.resources(Allocation.class).inNamespace("default").list().getItems().stream()
                            .mapToLong(a -> a.getStatus() == null || a.getStatus().getRestarts() == null ? 0
                                    : a.getStatus().getRestarts()).sum();
                    result.put("restartsAfterRestore", restarts);
                }
                if (terminal) {
                    err.println();
                }
                out.println(JSON.writeValueAsString(result));
                return 0;
            } finally {
                agent.destroy();
                agent.waitFor(60, TimeUnit.SECONDS);
            }
        } finally {
            server.destroy();
            server.waitFor(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Starts the local API server ({@code apiserver}, from this jar) as a process of its own, with {@link #SERVER_JVM},
     * and waits for its ready line.
     */
    private Process startServer(Path kubeconfig, Path log) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(SERVER_JVM);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), LocalMain.class.getName(), "apiserver",
                "--kubeconfig", kubeconfig.toString(), "--nodes", LocalMain.LOCAL_NODE));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        var lines = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        for (String line; (line = lines.readLine()) != null; ) {
            seen.add(line);
            Matcher m = Pattern.compile("ready at (http://\\S+)").matcher(line);
            if (m.find()) {
                serverUrl = URI.create(m.group(1));
                Thread.ofPlatform().daemon().name("bench-apiserver-log").start(() -> drain(lines, log));
                return p;
            }
        }
        p.waitFor(10, TimeUnit.SECONDS);
        throw new IOException("the local API server exited before it was ready:\n" + String.join("\n", seen));
    }

    private static void drain(java.io.BufferedReader lines, Path log) {
        try (var out = Files.newBufferedWriter(log)) {
            for (String line; (line = lines.readLine()) != null; ) {
                out.write(line);
                out.newLine();
            }
        } catch (IOException ignored) {
            // the server is gone
        }
    }

    /**
     * Per allocation, from the agent seeing it (its tasks' Received events: the agent records them when it takes
     * the allocation on) to every task Started, as the agent's own clock has them in status; sorted.
     */
    static List<Double> seenToRunning(List<Allocation> list) {
        List<Double> out = new ArrayList<>();
        for (Allocation a : list) {
            Span span = Span.of(a);
            if (span.complete()) {
                out.add(Duration.between(span.received(), span.started()).toNanos() / 1e9);
            }
        }
        out.sort(Double::compare);
        return out;
    }

    /**
     * An allocation's first task {@code Received} and last task {@code Started}, as the agent wrote them (null when
     * no task has one); complete when every task has both.
     */
    record Span(Instant received, Instant started, boolean complete) {

        static Span of(Allocation a) {
            Instant received = null;
            Instant started = null;
            boolean complete = a.getStatus() != null && a.getStatus().getTaskStates() != null;
            for (TaskState state : complete ? a.getStatus().getTaskStates().values() : List.<TaskState>of()) {
                Instant r = firstEvent(state, TaskEventType.Received);
                Instant s = firstEvent(state, TaskEventType.Started);
                complete &= r != null && s != null;
                received = r != null && (received == null || r.isBefore(received)) ? r : received;
                started = s != null && (started == null || s.isAfter(started)) ? s : started;
            }
            return new Span(received, started, complete && received != null);
        }
    }

    /**
     * One line per allocation, in milliseconds from the first create: created (its create call returned), received
     * (the agent took it on), started (its last task started), running (the bench's watch saw it Running).
     */
    private void writeTimeline(List<Allocation> listed, Map<String, Long> created, Map<String, Long> running,
                               long begin, Instant beginWall) throws IOException {
        List<String> lines = new ArrayList<>(List.of("name,createdMs,receivedMs,startedMs,runningMs"));
        for (Allocation a : listed) {
            String name = a.getMetadata().getName();
            Span span = Span.of(a);
            lines.add(name + "," + millis(created.get(name), begin) + "," + millis(span.received(), beginWall) + ","
                    + millis(span.started(), beginWall) + "," + millis(running.get(name), begin));
        }
        Files.write(timeline, lines);
    }

    private static String millis(Long nanos, long begin) {
        return nanos == null ? "" : Long.toString((nanos - begin) / 1_000_000);
    }

    private static String millis(Instant at, Instant begin) {
        return at == null ? "" : Long.toString(Duration.between(begin, at).toMillis());
    }

    private static Instant firstEvent(TaskState state, TaskEventType type) {
        if (state.getEvents() == null) {
            return null;
        }
        return state.getEvents().stream().filter(e -> e.getType() == type).map(e -> Timestamps.parse(e.getTime()))
                .min(Instant::compareTo).orElse(null);
    }

    /**
     * Creates the allocations from 16 threads at once, each a plain POST of its JSON (the bench plays the users; a
     * typed client's serializing and reading back every answer was CPU taken from the agent measured beside it).
     */
    private void createAll(Map<String, Long> created) throws Exception {
        URI collection = serverUrl.resolve("/apis/drover.dev/v1alpha1/namespaces/default/allocations");
        String template = JSON.writeValueAsString(allocation("NAME-PLACEHOLDER"));
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < allocs; i++) {
                String name = "bench-" + i;
                String body = template.replace("NAME-PLACEHOLDER", name);
                sent.add(pool.submit(() -> {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(collection)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
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

    /**
     * Watches the allocations and notes when each is first {@code Running}, reading only the name and the client
     * status out of each event as it streams by.
     */
    private static final class RunningWatch implements AutoCloseable {
        private final Thread thread;
        private volatile java.io.InputStream stream;
        private volatile boolean closed;

        RunningWatch(URI server, Map<String, Long> running) throws IOException, InterruptedException {
            HttpClient client = HttpClient.newHttpClient();
            HttpResponse<java.io.InputStream> r = client.send(HttpRequest.newBuilder(server.resolve(
                    "/apis/drover.dev/v1alpha1/namespaces/default/allocations?watch=true")).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            if (r.statusCode() != 200) {
                throw new IOException("watching allocations: HTTP " + r.statusCode());
            }
            stream = r.body();
            thread = Thread.ofPlatform().name("bench-watch").start(() -> {
                try (client; var parser = JSON.getFactory().createParser(stream)) {
                    while (parser.nextToken() != null) { // one {"type": ..., "object": {...}} after another
                        String[] nameAndStatus = new String[2];
                        readEvent(parser, nameAndStatus);
                        if ("Running".equals(nameAndStatus[1]) && nameAndStatus[0] != null) {
                            running.putIfAbsent(nameAndStatus[0], System.nanoTime());
                        }
                    }
                } catch (IOException e) {
                    if (!closed) {
                        System.err.println("bench: the watch ended: " + e);
                    }
                }
            });
        }

        /** Reads one event object (the parser is on its START_OBJECT): object.metadata.name, object.status.clientStatus. */
        private static void readEvent(com.fasterxml.jackson.core.JsonParser p, String[] out) throws IOException {
            while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                String field = p.currentName();
                p.nextToken();
                if (field.equals("object") && p.currentToken() == com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                    while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                        String part = p.currentName();
                        p.nextToken();
                        if ((part.equals("metadata") || part.equals("status"))
                                && p.currentToken() == com.fasterxml.jackson.core.JsonToken.START_OBJECT) {
                            String wanted = part.equals("metadata") ? "name" : "clientStatus";
                            while (p.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
                                String key = p.currentName();
                                p.nextToken();
                                if (key.equals(wanted) && p.currentToken().isScalarValue()) {
                                    out[part.equals("metadata") ? 0 : 1] = p.getText();
                                } else {
                                    p.skipChildren();
                                }
                            }
                        } else {
                            p.skipChildren();
                        }
                    }
                } else {
                    p.skipChildren();
                }
            }
        }

        @Override
        public void close() throws InterruptedException {
            closed = true;
            try {
                stream.close();
            } catch (IOException e) {
                // closing anyway
            }
            thread.join(5_000);
        }
    }

    private Allocation allocation(String name) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(LocalMain.LOCAL_NODE);
        List<Task> list = new ArrayList<>();
        for (int t = 0; t < tasks; t++) {
            Task task = new Task();
            task.setName("task-" + t);
            task.setDriver("mock");
            task.setConfig(Map.of("runFor", "24h"));
            list.add(task);
        }
        spec.setTasks(list);
        a.setSpec(spec);
        return a;
    }

    private Process startAgent(List<String> args, Path log, int port) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(agentJvm);
        command.addAll(List.of("-jar", agentJar.toString()));
        command.addAll(args);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                throw new IOException("the agent exited with " + p.exitValue() + "; its log: " + log);
            }
            if (ready(port)) {
                return p;
            }
            Thread.sleep(50);
        }
        p.destroyForcibly();
        throw new IOException("the agent did not get ready in 2 minutes; its log: " + log);
    }

    private void waitUntil(java.util.function.BooleanSupplier done, Duration timeout,
                           java.util.function.IntSupplier progress, String what) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + progress.getAsInt() + " of " + allocs + " allocations "
                        + what + " after " + timeout.toSeconds() + " s");
            }
            if (terminal) {
                int n = progress.getAsInt();
                int width = 40;
                int filled = (int) ((long) n * width / allocs);
                err.print("\r[" + "#".repeat(filled) + " ".repeat(width - filled) + "] " + n + "/" + allocs + " " + what);
                err.flush();
            }
            Thread.sleep(50);
        }
    }

    /** GET {@code path} from the agent's HTTP port; empty while nothing answers there. */
    private Optional<HttpResponse<String>> get(int port, String path) {
        try {
            return Optional.of(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                    HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private String scrape(int port) {
        return get(port, "/metrics").map(HttpResponse::body).orElse("");
    }

    private boolean ready(int port) {
        return get(port, "/readyz").map(r -> r.statusCode() == 200).orElse(false);
    }

    private double runningAllocations(int port) {
        return sum(scrape(port), "drover_allocations\\{client_status=\"Running\",?\\}");
    }

    /** The sum of every sample of the series matching {@code series} (a regex of name and labels). */
    static double sum(String metrics, String series) {
        Matcher m = Pattern.compile("(?m)^" + series + " ([0-9.eE+-]+)$").matcher(metrics);
        double total = 0;
        while (m.find()) {
            total += Double.parseDouble(m.group(1));
        }
        return total;
    }

    /** The agent's used heap after a full collection. */
    private double heapAfterGc(long pid, int metricsPort) throws IOException, InterruptedException {
        runJcmd(pid);
        return sum(scrape(metricsPort), "jvm_memory_bytes_used\\{area=\"heap\",?\\}");
    }

    private static void runJcmd(long pid) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.run").redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        p.waitFor(60, TimeUnit.SECONDS);
    }

    static double percentile(List<Double> sorted, double p) {
        if (sorted.isEmpty()) {
            return 0;
        }
        int i = (int) Math.ceil(p * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    static String usage() {
        return String.join("\n", Arrays.asList(
                "  bench --allocs N --tasks M [--restart] [--agent-jar FILE] [--agent-jvm \"OPTIONS\"] [--timeline CSV]",
                "      Start the local API server here and the agent jar (default operator/target/drover-agent.jar)",
                "      as a child process with the image's JVM options (or OPTIONS), create N allocations of M mock",
                "      tasks at once, and print one JSON line:",
                "      allRunningSeconds, p50Seconds/p99Seconds (seen by the agent to Running),",
                "      createToRunningP50Seconds/createToRunningP99Seconds, statusWrites, stateChanges,",
                "      heapBytesPerAlloc, and with --restart restoreSeconds and restartsAfterRestore.",
                "      --timeline writes each allocation's created, received, started and running times (ms) as CSV."))
                + "\n";
    }
}
