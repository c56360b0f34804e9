package dev.drover.allocrunner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaims;
import dev.drover.allocwatcher.DiskFetcher;
import dev.drover.allocwatcher.LocalFirst;
import dev.drover.allocwatcher.PreviousAllocations;
import dev.drover.api.Timestamps;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.EphemeralDisk;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.host.LogRotator;
import dev.drover.driver.rawexec.RawExecDriver;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.state.StoredAllocation;
import dev.drover.taskrunner.TaskRunnerConfig;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A replacement starts only after the allocation it replaces is done, and inherits its data when sticky. */
class PreviousAllocationTest {

    @TempDir
    Path data;

    static Allocation alloc(String name, String previous, String script) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName(name)
                .withNamespace("default")
                .withGeneration(1L)
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setType(AllocationType.Batch);
        spec.setPreviousAllocation(previous);
        spec.setEphemeralDisk(new EphemeralDisk(null, true, null));
        Task t = new Task();
        t.setName("app");
        t.setDriver("raw_exec");
        t.setConfig(Map.of("command", "/bin/sh", "args", List.of("-c", script)));
        spec.setTasks(List.of(t));
        a.setSpec(spec);
        return a;
    }

    @Test
    void replacementWaitsForThePreviousAllocationAndKeepsItsDataWhenSticky() throws Exception {
        Map<AllocId, AllocRunner> local = new ConcurrentHashMap<>();
        PreviousAllocations previous = new LocalFirst(
                id -> Optional.ofNullable(local.get(id)).map(AllocRunner::terminal), PreviousAllocations.NONE);
        try (StateDB db = StateStores.inMemory();
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            AllocRunnerConfig cfg = config(db, driver);
            AllocRunner old = new AllocRunner(
                    cfg,
                    alloc("web-1", null, "echo from-web-1 > \"$DROVER_ALLOC_DIR/data/note\"; sleep 0.5"),
                    NO_LISTENER,
                    previous);
            local.put(old.id(), old);
            AllocRunner next = new AllocRunner(
                    cfg,
                    alloc("web-2", "web-1", "cat \"$DROVER_ALLOC_DIR/data/note\" > \"$DROVER_TASK_DIR/local/seen\""),
                    NO_LISTENER,
                    previous);
            old.run();
            next.run();
            next.terminal().get(20, TimeUnit.SECONDS);

            Instant oldDone =
                    Timestamps.parse(old.allocState().taskStates().get("app").getFinishedAt());
            Instant nextStart =
                    Timestamps.parse(next.allocState().taskStates().get("app").getStartedAt());
            assertThat(nextStart).isAfterOrEqualTo(oldDone);
            assertThat(Files.readString(data.resolve("allocs/default/web-2/app/local/seen")))
                    .isEqualTo("from-web-1\n");
            assertThat(next.allocState().taskStates().get("app").getEvents())
                    .anySatisfy(e -> assertThat(e.getMessage())
                            .isEqualTo("Migrated the ephemeral disk of previous allocation web-1"));
            old.destroy();
            next.destroy();
        }
    }

    final List<String> remoteWarnings = new CopyOnWriteArrayList<>();

    /** Runs {@code web-2}, replacing web-1 that ran on another node, with {@code disks} bringing web-1's disk. */
    AllocRunner replacementOfARemoteAllocation(EphemeralDisk disk, DiskFetcher disks, StateDB db, RawExecDriver driver)
            throws Exception {
        PreviousAllocations previous = new LocalFirst(id -> Optional.empty(), PreviousAllocations.NONE, disks);
        AllocRunnerConfig cfg = config(db, driver);
        Allocation a = alloc(
                "web-2",
                "web-1",
                "cat \"$DROVER_ALLOC_DIR/data/note\" > \"$DROVER_TASK_DIR/local/seen\" 2>/dev/null; echo done >> \"$DROVER_TASK_DIR/local/seen\"");
        a.getSpec().setEphemeralDisk(disk);
        AllocRunner next = new AllocRunner(
                cfg,
                a,
                new AllocStateListener() {
                    @Override
                    public void allocStateChanged(AllocId id, AllocState s, String t, List<TaskEvent> e) {}

                    @Override
                    public void allocWarning(AllocId id, String reason, String message) {
                        remoteWarnings.add(reason + ": " + message);
                    }
                },
                previous);
        next.run();
        next.terminal().get(20, TimeUnit.SECONDS);
        return next;
    }

    static List<String> messages(AllocRunner r) {
        return r.allocState().taskStates().get("app").getEvents().stream()
                .map(e -> e.getMessage())
                .toList();
    }

    @Test
    void aMigratingDiskComesFromTheAgentOfTheNodeThePreviousAllocationRanOn() throws Exception {
        List<AllocId> asked = new java.util.concurrent.CopyOnWriteArrayList<>();
        DiskFetcher fromNodeA = (prev, claimant, staging, tasks, maxBytes) -> {
            asked.add(prev);
            assertThat(tasks).containsExactly("app");
            assertThat(maxBytes).isEqualTo(64L << 20);
            Files.createDirectories(staging.resolve("alloc/data"));
            Files.writeString(staging.resolve("alloc/data/note"), "from-node-a\n");
            return new DiskFetcher.Fetched("node-a", 12);
        };
        try (StateDB db = StateStores.inMemory();
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            AllocRunner next =
                    replacementOfARemoteAllocation(new EphemeralDisk(64, false, true), fromNodeA, db, driver);
            assertThat(asked).containsExactly(new AllocId("default", "web-1"));
            assertThat(Files.readString(data.resolve("allocs/default/web-2/app/local/seen")))
                    .isEqualTo("from-node-a\ndone\n");
            assertThat(messages(next))
                    .contains("Migrated the ephemeral disk of previous allocation web-1 from node node-a"
                            + " (12 bytes)");
            assertThat(data.resolve("allocs/default/web-2/.snapshot")).doesNotExist();
            next.destroy();
        }
    }

    @Test
    void aFailedDownloadIsSoftTheTasksStartEmptyAndTheEventSaysWhy() throws Exception {
        DiskFetcher halfThenFail = (prev, claimant, staging, tasks, maxBytes) -> {
            Files.createDirectories(staging.resolve("alloc/data"));
            Files.writeString(staging.resolve("alloc/data/note"), "half");
            throw new IOException("the snapshot ends without its end-of-archive blocks (cut short?)");
        };
        try (StateDB db = StateStores.inMemory();
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            AllocRunner next =
                    replacementOfARemoteAllocation(new EphemeralDisk(null, false, true), halfThenFail, db, driver);
            assertThat(Files.readString(data.resolve("allocs/default/web-2/app/local/seen")))
                    .as("nothing of the partial download is used")
                    .isEqualTo("done\n");
            assertThat(next.allocState().taskStates().get("app").getFailed()).isFalse();
            assertThat(messages(next))
                    .contains(
                            "Could not migrate the ephemeral disk of previous allocation web-1;"
                                    + " starting with an empty one: the snapshot ends without its end-of-archive blocks (cut short?)");
            assertThat(remoteWarnings)
                    .containsExactly("DiskMigrationFailed: Could not migrate the ephemeral disk of previous allocation"
                            + " web-1; starting with an empty one: the snapshot ends without its end-of-archive blocks"
                            + " (cut short?)");
            assertThat(data.resolve("allocs/default/web-2/.snapshot")).doesNotExist();
            next.destroy();
        }
    }

    @Test
    void aStickyDiskThatIsNotMigratingStaysOnItsNode() throws Exception {
        DiskFetcher never = (prev, claimant, staging, tasks, maxBytes) -> {
            throw new AssertionError("a sticky disk is never fetched from another node");
        };
        try (StateDB db = StateStores.inMemory();
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            AllocRunner next = replacementOfARemoteAllocation(new EphemeralDisk(null, true, false), never, db, driver);
            assertThat(messages(next))
                    .anySatisfy(m -> assertThat(m)
                            .startsWith("Previous allocation web-1 did not run"
                                    + " on this node and a sticky disk stays on its node"));
            next.destroy();
        }
    }

    /** A previous allocation that another node runs: terminal when the test says so. */
    static final class Remote implements PreviousAllocations {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final CountDownLatch asked = new CountDownLatch(1);
        final List<AllocId> fetched = new CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<Void> terminal(AllocId id) {
            asked.countDown();
            CompletableFuture<Void> wait = new CompletableFuture<>();
            done.whenComplete((v, e) -> wait.complete(null));
            return wait;
        }

        @Override
        public DiskFetcher.Fetched fetchDisk(
                AllocId id, Claimant claimant, Path staging, Set<String> tasks, long maxBytes) throws IOException {
            fetched.add(id);
            Files.createDirectories(staging.resolve("alloc/data"));
            Files.writeString(staging.resolve("alloc/data/note"), "from-node-a\n");
            return new DiskFetcher.Fetched("node-a", 12);
        }
    }

    static final AllocStateListener NO_LISTENER = (id, state, task, event) -> {};

    AllocRunnerConfig config(StateDB db, RawExecDriver driver) {
        return new AllocRunnerConfig(
                data,
                new TaskRunnerConfig.Shared(
                        new DriverRegistry(List.of(driver)),
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(10),
                        TaskRunnerConfig.StopRetry.DEFAULT),
                List.of(),
                List.of());
    }

    static Allocation migratingReplacement() {
        Allocation a = alloc(
                "web-2",
                "web-1",
                "cat \"$DROVER_ALLOC_DIR/data/note\" > \"$DROVER_TASK_DIR/local/seen\" 2>/dev/null; echo done >> \"$DROVER_TASK_DIR/local/seen\"");
        a.getSpec().setEphemeralDisk(new EphemeralDisk(null, false, true));
        return a;
    }

    @Test
    void aRunnerRestoredMidWaitStillWaitsAndThenMigrates() throws Exception {
        try (StateDB db = StateStores.open(data.resolve("state"));
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            Remote before = new Remote();
            AllocRunner waiting = new AllocRunner(config(db, driver), migratingReplacement(), NO_LISTENER, before);
            waiting.run();
            assertThat(before.asked.await(10, TimeUnit.SECONDS)).isTrue();
            waiting.shutdown(); // the agent stops while web-2 waits for web-1

            Remote after = new Remote();
            StoredAllocation stored = db.loadAll().getFirst();
            AllocRunner restored = AllocRunner.restore(config(db, driver), stored, NO_LISTENER, after);
            restored.run();
            assertThat(after.asked.await(10, TimeUnit.SECONDS))
                    .as("the restored runner waits again")
                    .isTrue();
            assertThat(restored.allocState().taskStates().get("app").getState()).isEqualTo(TaskState.State.Pending);
            assertThat(restored.allocState().taskStates().get("app").getStartedAt())
                    .isNull();
            after.done.complete(null); // web-1 is terminal now
            restored.terminal().get(20, TimeUnit.SECONDS);
            assertThat(after.fetched).containsExactly(new AllocId("default", "web-1"));
            assertThat(Files.readString(data.resolve("allocs/default/web-2/app/local/seen")))
                    .isEqualTo("from-node-a\ndone\n");
            restored.destroy();
        }
    }

    @Test
    void destroyingAnAllocationThatWaitsForItsPreviousOneEndsTheWaitAtOnce() throws Exception {
        try (StateDB db = StateStores.inMemory();
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            Remote previous = new Remote();
            AllocRunnerConfig cfg = config(db, driver);
            AllocRunner waiting = new AllocRunner(cfg, migratingReplacement(), NO_LISTENER, previous);
            waiting.run();
            assertThat(previous.asked.await(10, TimeUnit.SECONDS)).isTrue();
            long start = System.nanoTime();
            waiting.destroy();
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(took)
                    .as("destroy took %s; its deadline is %s", took, cfg.destroyDeadline())
                    .isLessThan(Duration.ofSeconds(3));
            assertThat(waiting.allocState().taskStates().get("app").getState()).isEqualTo(TaskState.State.Dead);
            assertThat(waiting.allocState().taskStates().get("app").getStartedAt())
                    .isNull();
            assertThat(previous.fetched).isEmpty();
        }
    }

    @Test
    void aSecondSuccessorOfTheSameAllocationGetsAWarningAndNothing() throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        List<String> fetchedBy = new CopyOnWriteArrayList<>();
        Path onNodeA = Files.createDirectories(data.resolve("node-a/allocs/default/web-1"));
        try (StateDB db = StateStores.inMemory();
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            // the agent of node a claims the disk where it is, then hands it over
            DiskFetcher fromNodeA = (prev, claimant, staging, tasks, maxBytes) -> {
                DiskClaims.claim(onNodeA, claimant);
                fetchedBy.add(claimant.value());
                Files.createDirectories(staging.resolve("alloc/data"));
                Files.writeString(staging.resolve("alloc/data/note"), "web-1's data\n");
                return new DiskFetcher.Fetched("node-a", 13);
            };
            PreviousAllocations previous = new LocalFirst(id -> Optional.empty(), PreviousAllocations.NONE, fromNodeA);
            AllocRunnerConfig cfg = config(db, driver);
            AllocStateListener listener = new AllocStateListener() {
                @Override
                public void allocStateChanged(AllocId id, AllocState s, String t, List<TaskEvent> e) {}

                @Override
                public void allocWarning(AllocId id, String reason, String message) {
                    warnings.add(id.name() + " " + reason + ": " + message);
                }
            };
            String script = "cat \"$DROVER_ALLOC_DIR/data/note\" > \"$DROVER_TASK_DIR/local/seen\" 2>/dev/null;"
                    + " echo done >> \"$DROVER_TASK_DIR/local/seen\"";
            List<AllocRunner> runners = new ArrayList<>();
            for (String name : List.of("web-2", "web-3")) {
                Allocation a = alloc(name, "web-1", script);
                a.getMetadata().setUid("uid-" + name);
                a.getSpec().setEphemeralDisk(new EphemeralDisk(null, false, true));
                AllocRunner r = new AllocRunner(cfg, a, listener, previous);
                runners.add(r);
                r.run();
                r.terminal().get(20, TimeUnit.SECONDS);
            }
            assertThat(fetchedBy).containsExactly("web-2/uid-web-2");
            assertThat(Files.readString(data.resolve("allocs/default/web-2/app/local/seen")))
                    .isEqualTo("web-1's data\ndone\n");
            assertThat(Files.readString(data.resolve("allocs/default/web-3/app/local/seen")))
                    .isEqualTo("done\n");
            String refusal = "Not taking the ephemeral disk of previous allocation web-1; starting with an empty one:"
                    + " allocation web-2 claimed the disk of web-1 first, and a disk goes to one successor only";
            assertThat(messages(runners.get(1))).contains(refusal);
            assertThat(warnings).containsExactly("web-3 DiskAlreadyClaimed: " + refusal);
            for (AllocRunner r : runners) {
                r.destroy();
            }
        }
    }

    @Test
    void onOneNodeTheFirstSuccessorTakesTheDiskAndASecondGetsAWarning() throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        Map<AllocId, AllocRunner> local = new ConcurrentHashMap<>();
        PreviousAllocations previous = new LocalFirst(
                id -> Optional.ofNullable(local.get(id)).map(AllocRunner::terminal), PreviousAllocations.NONE);
        AllocStateListener listener = new AllocStateListener() {
            @Override
            public void allocStateChanged(AllocId id, AllocState s, String t, List<TaskEvent> e) {}

            @Override
            public void allocWarning(AllocId id, String reason, String message) {
                warnings.add(id.name() + " " + reason);
            }
        };
        try (StateDB db = StateStores.inMemory();
                LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
            AllocRunnerConfig cfg = config(db, driver);
            AllocRunner old = new AllocRunner(
                    cfg, alloc("web-1", null, "echo kept > \"$DROVER_ALLOC_DIR/data/note\""), listener, previous);
            local.put(old.id(), old);
            old.run();
            old.terminal().get(20, TimeUnit.SECONDS);
            String script = "cat \"$DROVER_ALLOC_DIR/data/note\" > \"$DROVER_TASK_DIR/local/seen\" 2>/dev/null;"
                    + " echo done >> \"$DROVER_TASK_DIR/local/seen\"";
            List<AllocRunner> runners = new ArrayList<>();
            for (String name : List.of("web-2", "web-3")) {
                Allocation a = alloc(name, "web-1", script);
                a.getMetadata().setUid("uid-" + name);
                AllocRunner r = new AllocRunner(cfg, a, listener, previous);
                runners.add(r);
                r.run();
                r.terminal().get(20, TimeUnit.SECONDS);
            }
            assertThat(Files.readString(data.resolve("allocs/default/web-2/app/local/seen")))
                    .isEqualTo("kept\ndone\n");
            assertThat(Files.readString(data.resolve("allocs/default/web-3/app/local/seen")))
                    .isEqualTo("done\n");
            assertThat(warnings).containsExactly("web-3 DiskAlreadyClaimed");
            assertThat(DiskClaims.holder(data.resolve("allocs/default/web-1")))
                    .as("the claim is kept beside the disk, on its node")
                    .contains(new Claimant("web-2", "uid-web-2"));
            old.destroy();
            for (AllocRunner r : runners) {
                r.destroy();
            }
        }
    }
}
