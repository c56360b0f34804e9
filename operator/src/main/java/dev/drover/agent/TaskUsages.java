package dev.drover.agent;

import dev.drover.allocrunner.AllocRunner;
import dev.drover.common.UserText;
import dev.drover.driver.DriverException;
import dev.drover.driver.TaskStats;
import dev.drover.metrics.TaskUsageMetrics;
import dev.drover.state.AllocId;
import dev.drover.taskrunner.TaskRunner;
import io.prometheus.client.CollectorRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running tasks' usage for a scrape, read from their drivers (a host-process task's cgroup) as the stats API
 * reads it: every task of every allocation the agent runs at once, at most {@value #READERS} reads at a time, all
 * within {@link #DEADLINE}. A task not running, one whose driver fails to answer (its cgroup gone, it exited
 * meanwhile) and one not read within the deadline are left out of this scrape. No thread polls between scrapes.
 */
final class TaskUsages implements TaskUsageMetrics.Source {

    private static final Logger LOG = LoggerFactory.getLogger(TaskUsages.class);

    /** Reads at once: cgroup files are small, a few suffice, and a slow driver holds no more than these. */
    static final int READERS = 16;

    /** How long one scrape waits for the tasks' usage: below Prometheus' default scrape timeout of 10 s. */
    static final Duration DEADLINE = Duration.ofSeconds(5);

    private final Supplier<List<AllocRunner>> runners;

    TaskUsages(Supplier<List<AllocRunner>> runners) {
        this.runners = runners;
    }

    /** Serves the running tasks' usage on {@code registry}, read from {@code runners}' tasks at each scrape. */
    static void register(Supplier<List<AllocRunner>> runners, CollectorRegistry registry) {
        new TaskUsageMetrics(new TaskUsages(runners)).register(registry);
    }

    private record Read(AllocId alloc, String task, Future<Optional<TaskStats>> stats) {}

    @Override
    public List<TaskUsageMetrics.Usage> get() {
        List<TaskUsageMetrics.Usage> out = new ArrayList<>();
        Semaphore slots = new Semaphore(READERS);
        long end = System.nanoTime() + DEADLINE.toNanos();
        try (ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Read> reads = new ArrayList<>();
            for (AllocRunner r : runners.get()) {
                for (Map.Entry<String, TaskRunner> t : r.taskRunners().entrySet()) {
                    reads.add(new Read(r.id(), t.getKey(), readers.submit(() -> read(t.getValue(), slots))));
                }
            }
            for (Read read : reads) {
                usage(read, end).ifPresent(out::add);
            }
            reads.forEach(read -> read.stats().cancel(true)); // those past the deadline: the executor's close waits
        }
        return out;
    }

    private static Optional<TaskStats> read(TaskRunner task, Semaphore slots)
            throws DriverException, InterruptedException {
        slots.acquire();
        try {
            return task.stats();
        } finally {
            slots.release();
        }
    }

    private static Optional<TaskUsageMetrics.Usage> usage(Read read, long end) {
        try {
            Optional<TaskStats> s = read.stats().get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            return s.map(stats -> new TaskUsageMetrics.Usage(
                    read.alloc().namespace(),
                    read.alloc().name(),
                    read.task(),
                    stats.cpuTime().toNanos() / 1e9,
                    stats.workingSetBytes(),
                    stats.memoryLimitBytes()));
        } catch (ExecutionException e) {
            LOG.debug(
                    "no usage of task {} of {} in this scrape: {}",
                    read.task(),
                    read.alloc(),
                    UserText.cut(String.valueOf(e.getCause()), 500));
        } catch (TimeoutException | CancellationException e) {
            LOG.debug(
                    "no usage of task {} of {} in this scrape: not read within {}",
                    read.task(),
                    read.alloc(),
                    DEADLINE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Optional.empty();
    }
}
