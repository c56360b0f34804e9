package dev.drover.driver.mock;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.Signals;
import dev.drover.common.ConfigReader;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.TaskStats;
import dev.drover.driver.host.LogRotator;
import dev.drover.logging.LogThrottle;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A driver for tests, demos and benchmarks: tasks that only pretend to run,
 * exactly as long and with the exit code their config says. Thousands of mock
 * tasks cost no threads: one scheduler thread serves them all.
 *
 * <p>A mock task survives an agent restart the way a real one would: its
 * handle records when it started and how long it runs, and {@link #recover}
 * picks it up with the time it has left.
 */
public final class MockDriver implements Driver {

    public static final String NAME = "mock";
    /** The most a task's repeated output writes a second: whatever its config, one thread serves every task. */
    static final long MAX_BYTES_PER_SECOND = 64 << 10;
    /** The shortest time between two repeats. */
    static final Duration MIN_REPEAT_PERIOD = Duration.ofMillis(10);
    /** In a handle: the task's exec scripts, as JSON. */
    private static final String EXEC_KEY = "exec";

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final Logger LOG = LoggerFactory.getLogger(MockDriver.class);
    private static final LogThrottle WRITE_FAILURES = new LogThrottle(Duration.ofSeconds(30));

    private final InstantSource clock;
    private final LogRotator rotator;
    private final boolean ownsRotator;
    private final ScheduledExecutorService scheduler;
    private final Map<String, MockTask> tasks = new ConcurrentHashMap<>();

    /** One running (or finished, not yet destroyed) mock task. */
    private static final class MockTask {
        final CompletableFuture<ExitResult> exit = new CompletableFuture<>();
        final MockConfig config;
        final Instant startedAt;
        volatile ScheduledFuture<?> timer;
        volatile ScheduledFuture<?> output;
        volatile Path stdout;
        /** The commands running in it, which end with it as a real task's do. */
        final Set<ExecProcess> commands = ConcurrentHashMap.newKeySet();

        MockTask(MockConfig config, Instant startedAt) {
            this.config = config;
            this.startedAt = startedAt;
        }

        void finish(ExitResult result) {
            if (exit.complete(result)) {
                cancel(timer);
                cancel(output);
            }
            commands.forEach(ExecProcess::close);
        }

        private static void cancel(ScheduledFuture<?> f) {
            if (f != null) {
                f.cancel(false);
            }
        }
    }

    /** A driver with a rotator of its own (raw_exec's sizes), closed with it. */
    public MockDriver(InstantSource clock) {
        this(clock, new LogRotator(10L << 20, 5, Duration.ofSeconds(5)), true);
    }

    /** A driver whose tasks' logs {@code rotator} keeps bounded, as it does raw_exec's. */
    public MockDriver(InstantSource clock, LogRotator rotator) {
        this(clock, rotator, false);
    }

    private MockDriver(InstantSource clock, LogRotator rotator, boolean ownsRotator) {
        this.clock = clock;
        this.rotator = rotator;
        this.ownsRotator = ownsRotator;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("drover-mock-driver").daemon(true).factory());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> validate(Map<String, Object> config) {
        return MockConfig.parse(config).problems();
    }

    @Override
    public TaskHandle start(TaskConfig task) throws DriverStartException {
        MockConfig.Parsed parsed = MockConfig.parse(task.config());
        if (!parsed.problems().isEmpty()) {
            throw new DriverStartException(String.join("; ", parsed.problems()), false);
        }
        MockConfig config = parsed.config();
        if (config.startBlockFor() != null) {
            try {
                Thread.sleep(config.startBlockFor());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DriverStartException("start interrupted", true, e);
            }
        }
        if (config.startError() != null) {
            throw new DriverStartException(config.startError(), config.startErrorRecoverable());
        }
        Instant now = clock.instant();
        Map<String, String> state = new HashMap<>();
        if (config.runFor() != null) {
            state.put("runForNanos", Long.toString(config.runFor().toNanos()));
        }
        state.put("exitCode", Integer.toString(config.exitCode()));
        if (config.exitOnSignal() != null) {
            state.put("exitOnSignal", config.exitOnSignal());
        }
        if (config.signalError() != null) {
            state.put("signalError", config.signalError());
        }
        if (!config.exec().isEmpty()) {
            state.put(EXEC_KEY, writeJson(MockExec.describe(config.exec())));
        }
        TaskHandle handle = new TaskHandle(NAME, task.id(), now, state);
        run(handle, task, config, now, config.runFor());
        return handle;
    }

    private void run(TaskHandle handle, TaskConfig task, MockConfig config, Instant startedAt, Duration runFor) {
        MockTask t = new MockTask(config, startedAt);
        MockTask previous = tasks.put(handle.taskId(), t);
        if (previous != null) {
            previous.finish(ExitResult.signalled("SIGKILL"));
        }
        if (runFor != null) {
            t.timer = scheduler.schedule(
                    () -> t.finish(ExitResult.code(config.exitCode())),
                    Math.max(0, runFor.toNanos()),
                    TimeUnit.NANOSECONDS);
        }
        if (task != null && config.stdoutString() != null) {
            Path stdout = task.stdout();
            t.stdout = stdout;
            String line = config.stdoutString().endsWith("\n") ? config.stdoutString() : config.stdoutString() + "\n";
            try {
                Files.createDirectories(stdout.getParent());
                LogRotator.prepare(stdout);
            } catch (IOException e) {
                LOG.warn("mock task could not create {}: {}", stdout, e.toString());
            }
            rotator.watch(stdout);
            write(stdout, line);
            if (config.stdoutRepeat() > 0) {
                int[] left = {config.stdoutRepeat()};
                long every = repeatPeriod(config.stdoutRepeatDuration(), line).toNanos();
                t.output = scheduler.scheduleAtFixedRate(
                        () -> {
                            if (left[0]-- > 0 && !t.exit.isDone()) {
                                write(stdout, line);
                            } else {
                                t.output.cancel(false);
                            }
                        },
                        every,
                        every,
                        TimeUnit.NANOSECONDS);
            }
        }
    }

    /**
     * The config's period, stretched so that the task writes at most {@link #MAX_BYTES_PER_SECOND} and repeats
     * no more often than {@link #MIN_REPEAT_PERIOD}.
     */
    static Duration repeatPeriod(Duration asked, String line) {
        long bytes = line.getBytes(StandardCharsets.UTF_8).length;
        Duration forRate = Duration.ofNanos(Math.ceilDiv(bytes * 1_000_000_000L, MAX_BYTES_PER_SECOND));
        Duration period = asked.compareTo(MIN_REPEAT_PERIOD) < 0 ? MIN_REPEAT_PERIOD : asked;
        return period.compareTo(forRate) < 0 ? forRate : period;
    }

    private static void write(Path file, String line) {
        try {
            Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            // Fails on every write while the disk is full: one line per file and interval, with the count.
            WRITE_FAILURES.log(
                    file.toString(),
                    suppressed -> LOG.warn(
                            "mock task could not write {}: {}{}",
                            file,
                            e.toString(),
                            suppressed == 0 ? "" : " (" + suppressed + " failed writes not logged before this)"));
        }
    }

    @Override
    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
        MockTask t = tasks.get(handle.taskId());
        if (t == null) {
            return CompletableFuture.failedFuture(
                    new DriverException("no mock task " + handle.taskId() + " in this agent (recover it first)"));
        }
        return t.exit;
    }

    @Override
    public void stop(TaskHandle handle, Duration timeout, String signal) throws DriverException {
        MockTask t = tasks.get(handle.taskId());
        if (t == null || t.exit.isDone()) {
            return;
        }
        String sig = Signals.canonical(signal);
        Duration killAfter = t.config.killAfter();
        if (killAfter == null || killAfter.isZero()) {
            t.finish(ExitResult.signalled(sig));
        } else if (killAfter.compareTo(timeout) < 0) {
            scheduler.schedule(() -> t.finish(ExitResult.signalled(sig)), killAfter.toNanos(), TimeUnit.NANOSECONDS);
        } else {
            scheduler.schedule(
                    () -> t.finish(ExitResult.signalled("SIGKILL")), timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        try {
            t.exit.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DriverException("interrupted while stopping " + handle.taskId(), e);
        } catch (ExecutionException e) {
            throw new DriverException("mock task " + handle.taskId() + " failed: " + e.getCause(), e.getCause());
        }
    }

    /**
     * A running mock task takes any signal in its stride, but for its config's {@code exitOnSignal}, which ends it as
     * that signal would end a process; with {@code signalError}, sending fails with that message.
     */
    @Override
    public void signal(TaskHandle handle, String signal) throws DriverException {
        MockTask t = tasks.get(handle.taskId());
        if (t == null || t.exit.isDone()) {
            throw new TaskNotRunningException("mock task " + handle.taskId() + " is not running");
        }
        if (t.config.signalError() != null) {
            throw new DriverException(t.config.signalError());
        }
        String sig = Signals.canonical(signal);
        if (sig.equals(t.config.exitOnSignal())) {
            t.finish(ExitResult.signalled(sig));
        }
    }

    /** A command from the task's config's {@code exec} scripts: see {@link MockExec}. */
    @Override
    public ExecProcess exec(TaskHandle handle, ExecRequest request) throws DriverException {
        MockTask t = tasks.get(handle.taskId());
        if (t == null || t.exit.isDone()) {
            throw new TaskNotRunningException("mock task " + handle.taskId() + " is not running");
        }
        ExecProcess p = MockExec.start(t.config.exec(), request);
        t.commands.add(p);
        p.exit().whenComplete((code, e) -> t.commands.remove(p));
        if (t.exit.isDone()) {
            p.close(); // the task ended meanwhile
        }
        return p;
    }

    private static String writeJson(Map<String, Object> value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings, numbers and booleans is always JSON", e);
        }
    }

    /** The scripts a handle keeps; none when it keeps none or they no longer read (a handle is not trusted). */
    private static Map<String, MockExec.Script> recoveredScripts(TaskHandle handle) {
        String json = handle.state().get(EXEC_KEY);
        if (json == null) {
            return Map.of();
        }
        try {
            Map<String, Object> raw = JSON.readValue(json, new TypeReference<Map<String, Object>>() {});
            ConfigReader r = new ConfigReader(Map.of("exec", raw));
            Map<String, MockExec.Script> scripts = MockExec.parse(r, r.map("exec"));
            return r.problems().isEmpty() ? scripts : Map.of();
        } catch (JsonProcessingException e) {
            LOG.warn(
                    "mock task {}: its handle's exec scripts do not read: {}", handle.taskId(), e.getOriginalMessage());
            return Map.of();
        }
    }

    @Override
    public void destroy(TaskHandle handle) {
        MockTask t = tasks.remove(handle.taskId());
        if (t != null) {
            t.finish(ExitResult.signalled("SIGKILL"));
            if (t.stdout != null) {
                rotator.forget(t.stdout);
            }
        }
    }

    @Override
    public TaskHandle recover(TaskHandle handle) {
        if (tasks.containsKey(handle.taskId())) {
            return handle;
        }
        long runForNanos = handle.longState("runForNanos", -1);
        Duration runFor = runForNanos < 0 ? null : Duration.ofNanos(runForNanos);
        int exitCode = (int) handle.longState("exitCode", 0);
        Duration remaining =
                runFor == null ? null : runFor.minus(Duration.between(handle.startedAt(), clock.instant()));
        MockConfig config = new MockConfig(
                runFor,
                exitCode,
                null,
                false,
                null,
                null,
                null,
                0,
                null,
                handle.state().get("exitOnSignal"),
                handle.state().get("signalError"),
                recoveredScripts(handle));
        run(
                handle,
                null,
                config,
                handle.startedAt(),
                remaining == null ? null : (remaining.isNegative() ? Duration.ZERO : remaining));
        return handle;
    }

    @Override
    public TaskStats stats(TaskHandle handle) throws DriverException {
        MockTask t = tasks.get(handle.taskId());
        if (t == null) {
            throw new DriverException("no mock task " + handle.taskId());
        }
        Instant now = clock.instant();
        // A pretend load: 1 % of one CPU and a fixed 4 MiB, enough to see figures move in dashboards.
        Duration running = Duration.between(t.startedAt, now);
        return new TaskStats(now, running.dividedBy(100), 4L << 20);
    }

    @Override
    public void close() {
        tasks.values().forEach(t -> t.commands.forEach(ExecProcess::close)); // their threads are the driver's
        scheduler.shutdownNow();
        try {
            if (!scheduler.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("mock driver scheduler did not stop within 5s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsRotator) {
            rotator.close();
        }
    }
}
