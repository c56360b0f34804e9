package dev.drover.benchmarks;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of a task-state write: durable and changed, duplicate, eight
 * concurrent writers sharing commits, and in memory; and of an allocation's
 * deletion among ten thousand others. Each write is a task state
 * of about 300 bytes of JSON, the size of a task event update. The durable store
 * lives under {@code -Ddrover.bench.dir} (default: the working directory's
 * {@code target/}), which must be on a real disk for the fsync to count.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
public class StateStoreBenchmark {

    static final AllocId ALLOC = new AllocId("default", "bench");

    /** One store per trial, shared by the benchmark's threads. */
    @State(Scope.Benchmark)
    public static class DurableStore {
        Path dir;
        StateDB db;

        @Setup(Level.Trial)
        public void open() throws IOException {
            Path base = Path.of(System.getProperty("drover.bench.dir", "target"));
            dir = Files.createTempDirectory(Files.createDirectories(base), "state-bench-");
            db = StateStores.open(dir);
        }

        @TearDown(Level.Trial)
        public void close() {
            db.close();
            deleteTree(dir);
        }
    }

    @State(Scope.Benchmark)
    public static class MemoryStore {
        StateDB db;

        @Setup(Level.Trial)
        public void open() {
            db = StateStores.inMemory();
        }

        @TearDown(Level.Trial)
        public void close() {
            db.close();
        }
    }

    /**
     * A durable store already holding {@link #allocations} allocations of two tasks each, as an agent at that
     * scale does: what one more allocation's deletion costs among them.
     */
    @State(Scope.Benchmark)
    public static class CrowdedStore {
        @Param({"10000"})
        int allocations;

        final DurableStore store = new DurableStore();

        @Setup(Level.Trial)
        public void fill() throws IOException {
            store.open();
            TaskState state = taskState("web", 0);
            for (int i = 0; i < allocations; i++) {
                AllocId id = new AllocId("default", "alloc-" + i);
                store.db.putTaskState(id, "web", state);
                store.db.putTaskState(id, "sidecar", state);
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            store.close();
        }
    }

    /** Each thread writes its own task, with a sequence that changes the value every time. */
    @State(Scope.Thread)
    public static class Writer {
        private static final AtomicInteger TASKS = new AtomicInteger();
        String task;
        long seq;
        TaskState fixed;

        @Setup(Level.Trial)
        public void pick() {
            task = "task-" + TASKS.incrementAndGet();
            fixed = taskState(task, 0);
        }
    }

    @Benchmark
    public void durableChangedWrite(DurableStore store, Writer writer) {
        store.db.putTaskState(ALLOC, writer.task, taskState(writer.task, ++writer.seq));
    }

    @Benchmark
    public void durableDuplicateWrite(DurableStore store, Writer writer) {
        store.db.putTaskState(ALLOC, writer.task, writer.fixed);
    }

    @Benchmark
    @Threads(8)
    public void durableChangedWrite8Threads(DurableStore store, Writer writer) {
        store.db.putTaskState(ALLOC, writer.task, taskState(writer.task, ++writer.seq));
    }

    @Benchmark
    public void inMemoryChangedWrite(MemoryStore store, Writer writer) {
        store.db.putTaskState(ALLOC, writer.task, taskState(writer.task, ++writer.seq));
    }

    /** One allocation's task state written, then the allocation deleted, among {@link CrowdedStore#allocations}. */
    @Benchmark
    public void durableDeleteAmongMany(CrowdedStore store, Writer writer) {
        AllocId gone = new AllocId("default", "gone-" + ++writer.seq);
        store.store.db.putTaskState(gone, writer.task, writer.fixed);
        store.store.db.deleteAllocation(gone);
    }

    /** A task state shaped like the real one: status, counters and the newest event. */
    static TaskState taskState(String task, long seq) {
        TaskState state = new TaskState();
        state.setState(TaskState.State.Running);
        state.setFailed(false);
        state.setRestarts((int) (seq % 5));
        state.setStartedAt("2026-11-22T10:00:00Z");
        TaskEvent event = new TaskEvent();
        event.setType(TaskEventType.Started);
        event.setTime("2026-11-22T10:00:00." + (100_000_000 + seq % 900_000_000) + "Z");
        event.setMessage("Task " + task + " started by the mock driver (update " + seq + ")");
        state.setEvents(List.of(event));
        return state;
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
