package dev.drover.taskrunner.checks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.allocrunner.AllocDir;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckRestart;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.RestartMode;
import dev.drover.api.v1alpha1.RestartPolicy;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import dev.drover.driver.DriverRegistry;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.mock.MockDriver;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.taskrunner.TaskRunner;
import dev.drover.taskrunner.TaskRunnerConfig;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.hooks.TaskHooks;
import dev.drover.testing.ForwardingDriver;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TaskChecksTest {

    static final AllocId ALLOC = new AllocId("default", "web");

    @TempDir
    Path dir;

    final StateDB db = StateStores.inMemory();
    final MockDriver mock = new MockDriver(Clock.systemUTC());
    final List<ExecRequest> execs = new CopyOnWriteArrayList<>();
    /** The mock driver, running commands inside its tasks as a driver that can does. */
    final ForwardingDriver driver = new ForwardingDriver(mock) {
        @Override
        public ExecProcess exec(TaskHandle handle, ExecRequest request) {
            execs.add(request);
            return new DoneProcess();
        }
    };

    final FakeProber prober = new FakeProber();
    /** Every change the runner told, and the event with it (null for none). */
    final List<TaskState> changes = new CopyOnWriteArrayList<>();

    final List<TaskEvent> events = new CopyOnWriteArrayList<>();
    final BlockingQueue<TaskEvent> eventQueue = new LinkedBlockingQueue<>();
    final List<TaskRunner> runners = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (TaskRunner r : runners) {
            r.kill(null).get(10, TimeUnit.SECONDS);
        }
        mock.close();
        db.close();
    }

    static Check check(String name, int failureThreshold) {
        Check c = new Check(name, CheckType.HTTP);
        c.setPort(new IntOrString(8080));
        c.setFailureThreshold(failureThreshold);
        return c;
    }

    static Task task(List<Check> checks, CheckRestart restart) {
        Task t = new Task();
        t.setName("server");
        t.setDriver("mock");
        t.setConfig(Map.of("runFor", "1h"));
        t.setChecks(checks);
        t.setCheckRestart(restart);
        return t;
    }

    TaskRunner start(Task task, RestartPolicy policy) {
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("local");
        spec.setType(AllocationType.Service);
        spec.setRestartPolicy(policy);
        spec.setTasks(List.of(task));
        AllocDir allocDir = AllocDir.of(dir, ALLOC);
        TaskConfig template = new TaskConfig(
                ALLOC.namespace(),
                ALLOC.name(),
                task.getName(),
                Map.of(),
                Map.of(),
                allocDir.shared(),
                allocDir.taskDir(task.getName()),
                allocDir.logs(),
                allocDir.taskSecrets(task.getName()));
        DriverRegistry drivers = new DriverRegistry(List.of(driver));
        TaskRunnerConfig cfg = new TaskRunnerConfig(
                ALLOC,
                spec,
                task,
                template,
                TaskHooks.defaults(drivers, allocDir::buildTask, new NoCredentialsHook(), List.of()),
                List.of(new TaskChecks(prober, "default/web", Clock.systemUTC())),
                (name, state, taskEvents) -> {
                    changes.add(state);
                    events.addAll(taskEvents);
                    eventQueue.addAll(taskEvents);
                },
                new TaskRunnerConfig.Shared(
                        drivers,
                        db,
                        Clock.systemUTC(),
                        new SplittableRandom(1),
                        TaskRunnerConfig.DEFAULT_MAX_KILL_TIMEOUT,
                        Duration.ofSeconds(10),
                        new TaskRunnerConfig.StopRetry(List.of(Duration.ofMillis(10)))));
        TaskRunner r = new TaskRunner(cfg);
        runners.add(r);
        r.run();
        return r;
    }

    TaskEvent awaitEvent(TaskEventType type) throws InterruptedException {
        while (true) {
            TaskEvent e = eventQueue.poll(20, TimeUnit.SECONDS);
            if (e == null) {
                throw new AssertionError("no " + type + " event; had " + events);
            }
            if (e.getType() == type) {
                return e;
            }
        }
    }

    static CheckStatus only(TaskState s) {
        assertThat(s.getChecks()).hasSize(1);
        return s.getChecks().getFirst();
    }

    @Test
    void statusShowsChecksAndChangesOnlyWhenTheyDo() throws Exception {
        TaskRunner r = start(task(List.of(check("web", 2)), null), null);
        FakeProber.Probed probing = prober.next();
        assertThat(probing.checks).extracting(Check::getName).containsExactly("web");
        CheckStatus initial = only(r.state());
        assertThat(initial.getStatus()).isEqualTo(Status.CRITICAL);
        assertThat(initial.getOutput()).isEqualTo(CheckState.NOT_RUN);

        int before = changes.size();
        probing.push("web", ProbeResult.passing("HTTP 200: ok"));
        assertThat(changes).hasSize(before + 1);
        assertThat(only(r.state()).getStatus()).isEqualTo(Status.PASSING);
        TaskEvent passing = events.getLast();
        assertThat(passing.getType()).isEqualTo(TaskEventType.CheckStatusChanged);
        assertThat(passing.getMessage()).isEqualTo("check \"web\" is passing (was critical): HTTP 200: ok");
        assertThat(passing.getCheck()).isEqualTo("web");
        assertThat(passing.getCheckStatus()).isEqualTo(Status.PASSING);

        for (int i = 0; i < 20; i++) {
            probing.push("web", ProbeResult.passing("HTTP 200: ok at probe " + i));
        }
        assertThat(changes).as("a check that keeps passing changes nothing").hasSize(before + 1);

        probing.push("web", ProbeResult.critical("HTTP 503: down"));
        assertThat(changes).as("below failureThreshold").hasSize(before + 1);
        probing.push("web", ProbeResult.critical("HTTP 503: down"));
        assertThat(changes).hasSize(before + 2);
        CheckStatus critical = only(r.state());
        assertThat(critical.getStatus()).isEqualTo(Status.CRITICAL);
        assertThat(critical.getOutput()).isEqualTo("HTTP 503: down");
        assertThat(events.getLast().getMessage()).isEqualTo("check \"web\" is critical (was passing): HTTP 503: down");
        assertThat(events.getLast().getCheckStatus()).isEqualTo(Status.CRITICAL);
        assertThat(r.state().getState()).as("no checkRestart: the task runs on").isEqualTo(TaskState.State.Running);
    }

    @Test
    void aCheckWithoutAProbeSlotKeepsItsStatusMarkedStaleWithoutAnEvent() throws Exception {
        TaskRunner r = start(task(List.of(check("web", 1)), null), null);
        FakeProber.Probed probing = prober.next();
        assertThat(probing.allocation).as("its allocation's share of the slots").isEqualTo("default/web");
        probing.push("web", ProbeResult.passing("HTTP 200: ok"));
        int before = changes.size();
        int eventsBefore = events.size();

        probing.stale("web");
        assertThat(changes).hasSize(before + 1);
        CheckStatus stale = only(r.state());
        assertThat(stale.getStatus()).isEqualTo(Status.PASSING);
        assertThat(stale.getOutput())
                .startsWith("stale: not probed since ")
                .endsWith(", no probe slot was free; last said: HTTP 200: ok");
        probing.stale("web");
        assertThat(changes).as("stale once").hasSize(before + 1);
        assertThat(events).as("the status did not change").hasSize(eventsBefore);

        probing.push("web", ProbeResult.passing("HTTP 200: ok again"));
        assertThat(changes).as("fresh again").hasSize(before + 2);
        assertThat(only(r.state()).getOutput()).isEqualTo("HTTP 200: ok");
        assertThat(events).hasSize(eventsBefore);
    }

    @Test
    void anExecCheckRunsInsideTheTaskWithoutAnExecEvent() throws Exception {
        start(task(List.of(check("web", 1)), null), null);
        FakeProber.Probed probing = prober.next();
        try (ExecProcess p = probing.target.exec(new ExecRequest(List.of("pg_isready", "-q"), false, false))) {
            assertThat(p.exit().get(5, TimeUnit.SECONDS)).isZero();
        }
        assertThat(execs).extracting(ExecRequest::command).containsExactly(List.of("pg_isready", "-q"));
        assertThat(events).extracting(TaskEvent::getType).doesNotContain(TaskEventType.Exec);
    }

    @Test
    void checkRestartRestartsTheTaskCountedAgainstItsPolicy() throws Exception {
        RestartPolicy oneAttempt = new RestartPolicy(1, "1h", "10ms", RestartMode.Fail);
        TaskRunner r = start(task(List.of(check("web", 1)), new CheckRestart(2, "0s", false)), oneAttempt);
        FakeProber.Probed first = prober.next();
        first.push("web", ProbeResult.passing("ok"));
        first.push("web", ProbeResult.critical("HTTP 503: down"));
        first.push("web", ProbeResult.critical("HTTP 503: down"));

        TaskEvent restarting = awaitEvent(TaskEventType.Restarting);
        assertThat(restarting.getMessage())
                .startsWith("check \"web\" was critical 2 times in a row (checkRestart limit 2); ")
                .contains("Restart within policy");
        assertThat(events).extracting(TaskEvent::getType).doesNotContain(TaskEventType.RestartSignaled);

        FakeProber.Probed second = prober.next();
        assertThat(first.closed()).as("the first run's probing ended with it").isTrue();
        awaitEvent(TaskEventType.Started);
        CheckStatus again = only(r.state());
        assertThat(again.getStatus()).as("checks start again after a restart").isEqualTo(Status.CRITICAL);
        assertThat(again.getOutput()).isEqualTo(CheckState.NOT_RUN);
        assertThat(r.state().getRestarts()).isEqualTo(1);

        first.push("web", ProbeResult.passing("a late result of the first run"));
        assertThat(only(r.state()).getStatus()).as("dropped").isEqualTo(Status.CRITICAL);

        second.push("web", ProbeResult.critical("HTTP 503: still down"));
        second.push("web", ProbeResult.critical("HTTP 503: still down"));
        TaskEvent notRestarting = awaitEvent(TaskEventType.NotRestarting);
        assertThat(notRestarting.getMessage())
                .startsWith("check \"web\" was critical 2 times in a row (checkRestart limit 2); ")
                .contains("Exceeded allowed attempts 1");
        r.done().get(20, TimeUnit.SECONDS);
        TaskState end = r.state();
        assertThat(end.getState()).isEqualTo(TaskState.State.Dead);
        assertThat(end.getFailed()).isTrue();
        assertThat(end.getChecks()).as("a dead task reports no checks").isNull();
        assertThat(second.closed()).isTrue();
    }

    @Test
    void aProberThatIsClosingLeavesTheTaskRunningWithItsChecksCritical() throws Exception {
        prober.close();
        TaskRunner r = start(task(List.of(check("web", 1)), null), null);
        await().atMost(Duration.ofSeconds(20)).until(() -> r.state().getChecks() != null);
        assertThat(r.state().getState()).isEqualTo(TaskState.State.Running);
        assertThat(only(r.state()).getStatus()).isEqualTo(Status.CRITICAL);
        assertThat(events).extracting(TaskEvent::getType).doesNotContain(TaskEventType.DriverFailure);
    }

    @Test
    void aTaskWithoutChecksIsNotProbed() throws Exception {
        TaskRunner r = start(task(null, null), null);
        awaitEvent(TaskEventType.Started);
        r.kill(null).get(20, TimeUnit.SECONDS); // its run's hooks began before the kill was taken
        assertThat(prober.all).isEmpty();
        assertThat(r.state().getChecks()).isNull();
        assertThat(changes).allSatisfy(s -> assertThat(s.getChecks()).isNull());
    }

    /** A command that ran and exited 0 at once. */
    static final class DoneProcess implements ExecProcess {
        @Override
        public OutputStream stdin() {
            return OutputStream.nullOutputStream();
        }

        @Override
        public InputStream stdout() {
            return new ByteArrayInputStream(new byte[0]);
        }

        @Override
        public InputStream stderr() {
            return new ByteArrayInputStream(new byte[0]);
        }

        @Override
        public void resize(int columns, int rows) {}

        @Override
        public CompletableFuture<Integer> exit() {
            return CompletableFuture.completedFuture(0);
        }

        @Override
        public void close() {}
    }
}
