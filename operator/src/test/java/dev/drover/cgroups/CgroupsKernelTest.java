package dev.drover.cgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * On the real kernel: cgroups made only below this test process's own cgroup (in each hierarchy, on v1), and
 * removed after. Skipped where cgroups are missing or not writable (not root, a read-only /sys/fs/cgroup), or, on
 * v2, where this process's cgroup cannot hand controllers down.
 */
class CgroupsKernelTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final List<Process> started = new ArrayList<>();
    /** Processes the tests' scripts started in the background, ended by PID if a test fails before its kill did. */
    private final List<Long> strays = new ArrayList<>();

    private final List<Cgroup> made = new ArrayList<>();
    private Cgroups cgroups;
    private CgroupParent parent;

    @BeforeEach
    void makeATestParentBelowOurOwnCgroup() throws IOException {
        assumeTrue(Files.isReadable(Path.of("/proc/self/mountinfo")), "no /proc");
        try {
            cgroups = Cgroups.detect();
        } catch (IOException e) {
            abort("no cgroups: " + e.getMessage());
        }
        String name = "drover-test-" + UUID.randomUUID().toString().substring(0, 8);
        try {
            made.add(cgroups.create(CgroupParent.own(), name));
        } catch (IOException e) {
            abort("cannot make cgroups below this process's own (" + cgroups.description() + "): " + e.getMessage());
        }
        parent = CgroupParent.own().child(name);
    }

    @AfterEach
    void endWhatWeStartedAndRemoveWhatWeMade() throws Exception {
        for (Process p : started) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        strays.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        for (Cgroup c : made.reversed()) {
            c.killAll(TIMEOUT); // only processes started here ever entered these cgroups
            c.remove(TIMEOUT);
        }
    }

    @Test
    void detectionDescribesTheNodesCgroups() {
        assertThat(cgroups.description()).matches("cgroup v2|cgroup v1 \\([a-z,]+\\)");
    }

    @Test
    void killAllEndsEveryProcessEvenADaemonThatLeftTheSessionAndRemoveTakesTheCgroupAway() throws Exception {
        Cgroup cgroup = make("kill");
        Process task = startInside(cgroup, "setsid sh -c 'sleep 60 &'; exec sleep 60");
        await().atMost(TIMEOUT).until(() -> cgroup.pids().size() == 2 && allSleep(cgroup.pids()));
        List<Long> pids = cgroup.pids();
        long daemon = pids.stream().filter(pid -> pid != task.pid()).findFirst().orElseThrow();
        assertThat(sessionOf(daemon)).isNotEqualTo(sessionOf(task.pid())); // it left the task's session
        CgroupStats stats = cgroup.stats();
        assertThat(stats.memoryBytes()).isPositive();
        assertThat(stats.workingSetBytes()).isPositive().isLessThanOrEqualTo(stats.memoryBytes());
        assertThat(stats.memoryLimitBytes()).as("none was set").isZero();
        assertThat(stats.cpu()).isPositive();

        cgroup.killAll(TIMEOUT);

        assertThat(task.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(cgroup.pids()).isEmpty();
        await().atMost(TIMEOUT).until(() -> isGone(daemon));
        cgroup.remove(TIMEOUT);
        made.remove(cgroup);
        assertThat(cgroup.directories()).allMatch(dir -> !Files.exists(dir));
    }

    /** The attack: a root task makes cgroups inside its own and moves a child that left its session there. */
    @Test
    void killAllAndRemoveTakeTheCgroupsATaskMadeInsideItsOwnWithWhatRunsInThem() throws Exception {
        Cgroup cgroup = make("nest");
        StringBuilder script = new StringBuilder();
        StringBuilder join = new StringBuilder();
        for (Path dir : cgroup.directories()) {
            script.append("mkdir -p ").append(dir).append("/inner/deeper; ");
            join.append("echo $$ > ").append(dir).append("/inner/deeper/cgroup.procs; ");
        }
        Path first = cgroup.directories().getFirst();
        script.append("mkdir ").append(first).append("/inner/empty; "); // in one hierarchy only, on v1
        script.append("setsid sh -c '").append(join).append("exec sleep 60' & exec sleep 60");
        Process task = startInside(cgroup, script.toString());
        Path deeper = first.resolve("inner/deeper/cgroup.procs");
        await().atMost(TIMEOUT)
                .until(() -> Files.exists(deeper)
                        && allSleep(pidsIn(deeper))
                        && pidsIn(deeper).size() == 1);
        long daemon = pidsIn(deeper).getFirst();
        strays.add(daemon);
        assertThat(sessionOf(daemon)).isNotEqualTo(sessionOf(task.pid()));
        assertThat(cgroup.pids()).as("every process below it").containsExactlyInAnyOrder(task.pid(), daemon);

        cgroup.killAll(TIMEOUT);

        assertThat(task.waitFor(10, TimeUnit.SECONDS)).isTrue();
        await().atMost(TIMEOUT).until(() -> isGone(daemon));
        cgroup.remove(TIMEOUT);
        made.remove(cgroup);
        assertThat(cgroup.directories()).allMatch(dir -> !Files.exists(dir));
    }

    /**
     * A root task made more cgroups inside its own than a walk takes in (20 here), and a daemon in one a first walk
     * cannot see: the kill removes the empty ones until it sees the daemon (v1), or cgroup.kill ends it unseen (v2).
     */
    @Test
    void killAllAndRemovePastTheSubtreeLimitEndWhatRunsOutOfSightAndTakeEveryCgroup() throws Exception {
        Cgroup cgroup = make("many");
        Cgroup limited = Cgroups.detect(Path.of("/"), ProcessControl.system(), 20)
                .find(parent, "many")
                .orElseThrow();
        StringBuilder script = new StringBuilder();
        StringBuilder join = new StringBuilder();
        for (Path dir : cgroup.directories()) {
            script.append("for i in $(seq 30); do mkdir ").append(dir).append("/made$i; done; ");
            script.append("mkdir ").append(dir).append("/made30/hidden; ");
            join.append("echo $$ > ").append(dir).append("/made30/hidden/cgroup.procs; ");
        }
        script.append("setsid sh -c '").append(join).append("exec sleep 60' & exec sleep 60");
        Process task = startInside(cgroup, script.toString());
        Path hidden = cgroup.directories().getFirst().resolve("made30/hidden/cgroup.procs");
        await().atMost(TIMEOUT)
                .until(() -> Files.exists(hidden) && pidsIn(hidden).size() == 1 && allSleep(pidsIn(hidden)));
        long daemon = pidsIn(hidden).getFirst();
        strays.add(daemon);

        limited.killAll(TIMEOUT);

        assertThat(task.waitFor(10, TimeUnit.SECONDS)).isTrue();
        await().atMost(TIMEOUT).until(() -> isGone(daemon));
        limited.remove(TIMEOUT);
        made.remove(cgroup);
        assertThat(cgroup.directories()).allMatch(dir -> !Files.exists(dir));
    }

    /** A task that froze a cgroup of its own (v1 keeps a frozen process from dying of SIGKILL) is still ended. */
    @Test
    void killAllEndsAProcessInACgroupTheTaskFroze() throws Exception {
        Cgroup cgroup = make("cold");
        Optional<Path> freeze = cgroup.directories().stream()
                .flatMap(dir -> Stream.of(dir.resolve("freezer.state"), dir.resolve("cgroup.freeze")))
                .filter(Files::exists)
                .findFirst();
        assumeTrue(freeze.isPresent(), "no freezer");
        Path state =
                freeze.get().getParent().resolve("inner").resolve(freeze.get().getFileName());
        boolean v1 = state.getFileName().toString().equals("freezer.state");
        StringBuilder script = new StringBuilder("sleep 60 & child=$!; ");
        for (Path dir : cgroup.directories()) {
            script.append("mkdir ")
                    .append(dir)
                    .append("/inner && echo $child > ")
                    .append(dir)
                    .append("/inner/cgroup.procs; ");
        }
        script.append("echo ")
                .append(v1 ? "FROZEN" : "1")
                .append(" > ")
                .append(state)
                .append("; exec sleep 60");
        Process task = startInside(cgroup, script.toString());
        Path events = state.resolveSibling("cgroup.events");
        await().atMost(TIMEOUT)
                .until(() -> v1
                        ? Files.exists(state) && Files.readString(state).strip().equals("FROZEN")
                        : Files.exists(events) && Files.readString(events).contains("frozen 1"));
        List<Long> inner = pidsIn(state.resolveSibling("cgroup.procs"));
        assertThat(inner).hasSize(1);
        long frozen = inner.getFirst();
        strays.add(frozen);

        cgroup.killAll(TIMEOUT);

        assertThat(task.waitFor(10, TimeUnit.SECONDS)).isTrue();
        await().atMost(TIMEOUT).until(() -> isGone(frozen));
        cgroup.remove(TIMEOUT);
        made.remove(cgroup);
        assertThat(cgroup.directories()).allMatch(dir -> !Files.exists(dir));
    }

    private static List<Long> pidsIn(Path procs) throws IOException {
        return Files.readAllLines(procs).stream().map(Long::parseLong).toList();
    }

    @Test
    void aProcessPastTheMemoryLimitIsOomKilledAndThatIsTold() throws Exception {
        assumeTrue(
                cgroups.layout().hierarchy("memory").map(h -> h.has("memory")).orElse(false), "no memory controller");
        Cgroup cgroup = make("oom");
        cgroup.apply(new CgroupLimits(32L << 20, 0, false, 0));
        assertThat(cgroup.oomKilled()).isFalse();

        // tail keeps a line without end in memory: 200 MB of it
        Process task = startInside(cgroup, "head -c 200M /dev/zero | tail");

        assertThat(task.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(task.exitValue()).isNotZero();
        assertThat(cgroup.oomKilled()).isTrue();
        assertThat(cgroup.oomKills()).isPositive();
    }

    private Cgroup make(String name) throws IOException {
        Cgroup cgroup = cgroups.create(parent, name);
        made.add(cgroup);
        return cgroup;
    }

    /** Starts {@code script} with sh, puts it in {@code cgroup}, and only then lets it run on. */
    private Process startInside(Cgroup cgroup, String script) throws IOException {
        Process p = new ProcessBuilder("sh", "-c", "read go; " + script)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        started.add(p);
        cgroup.add(p.pid());
        try (OutputStream in = p.getOutputStream()) {
            in.write("go\n".getBytes(StandardCharsets.US_ASCII));
        }
        return p;
    }

    private static boolean allSleep(List<Long> pids) {
        return pids.stream()
                .allMatch(pid -> ProcessHandle.of(pid)
                        .flatMap(h -> h.info().command())
                        .map(c -> c.endsWith("/sleep"))
                        .orElse(false));
    }

    /** Field 6 of /proc/PID/stat, the session. */
    private static String sessionOf(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return stat.substring(stat.lastIndexOf(')') + 2).split(" ")[3];
    }

    /** No such process, or only its zombie left for its new parent to reap. */
    private static boolean isGone(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return true;
        }
    }
}
