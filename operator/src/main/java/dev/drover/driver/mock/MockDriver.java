package dev.drover.driver.mock;

import dev.drover.api.Signals;
import dev.drover.driver.Driver;
import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskStats;
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
    private static final Logger LOG = LoggerFactory.getLogger(MockDriver.class);
    private static final LogThrottle WRITE_FAILURES = new LogThrottle(Duration.ofSeconds(30));

    private final InstantSource clock;
    private final ScheduledExecutorService scheduler;
    private final Map<String, MockTask> tasks = new ConcurrentHashMap<>();

    /** One running (or finished, not yet destroyed) mock task. */
    private static final class MockTask {
        final CompletableFuture<ExitResult> exit = new CompletableFuture<>();
        final MockConfig config;
        final Instant startedAt;
        volatile ScheduledFuture<?> timer;
        volatile ScheduledFuture<?> output;

        MockTask(MockConfig config, Instant startedAt) {
            this.config = config;
            this.startedAt = startedAt;
        }

        void finish(ExitResult result) {
            if (exit.complete(result)) {
                cancel(timer);
                cancel(output);
            }
        }

        private static void cancel(ScheduledFuture<?> f) {
            if (f != null) {
                f.cancel(false);
            }
        }
    }

    public MockDriver(InstantSource clock) {
        this.clock = clock;
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
            t.timer = scheduler.schedule(() -> t.finish(ExitResult.code(config.exitCode())),
                    Math.max(0, runFor.toNanos()), TimeUnit.NANOSECONDS);
        }
        if (task != null && config.stdoutString() != null) {
            Path stdout = task.stdout();
            write(stdout, config.stdoutString());
            if (config.stdoutRepeat() > 0) {
                int[] left = {config.stdoutRepeat()};
                long every = config.stdoutRepeatDuration().toNanos();
                t.output = scheduler.scheduleAtFixedRate(() -> {
                    if (left[0]-- > 0 && !t.exit.isDone()) {
                        write(stdout, config.stdoutString());
                    } else {
                        t.output.cancel(false);
                    }
                }, every, Math.max(1, every), TimeUnit.NANOSECONDS);
            }
        }
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text.endsWith("\n") ? text : text + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            // Fails on every write while the disk is full: one line per file and interval, with the count.
            WRITE_FAILURES.log(file.toString(), suppressed -> LOG.warn("mock task could not write {}: {}{}", file,
                    e.toString(), suppressed == 0 ? "" : " (" + suppressed + " failed writes not logged before this)"));
        }
    }

    @Override
    public CompletableFuture<ExitResult> exit(TaskHandle handle) {
        MockTask t = tasks.get(handle.taskId());
        if (t == null) {
            return CompletableFuture.failedFuture(new DriverException("no mock task " + handle.taskId()
                    + " in this agent (recover it first)"));
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
            scheduler.schedule(() -> t.finish(ExitResult.signalled("SIGKILL")), timeout.toNanos(), TimeUnit.NANOSECONDS);
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

    @Override
    public void destroy(TaskHandle handle) {
        MockTask t = tasks.remove(handle.taskId());
        if (t != null) {
            t.finish(ExitResult.signalled("SIGKILL"));
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
        Duration remaining = runFor == null ? null : runFor.minus(Duration.between(handle.startedAt(), clock.instant()));
        MockConfig config = new MockConfig(runFor, exitCode, null, false, null, null, null, 0, null);
        run(handle, null, config, handle.startedAt(), remaining == null ? null
                : (remaining.isNegative() ? Duration.ZERO : remaining));
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
        scheduler.shutdownNow();
        try {
            if (!scheduler.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("mock driver scheduler did not stop within 5s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
