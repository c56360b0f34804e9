package dev.drover.taskrunner.checks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckStatus.Status;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.taskrunner.RunningTask;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A process the agent reattached to after its own restart keeps the checks its state reported: an allocation that
 * was Ready stays so while its checks are probed again, rather than every agent upgrade turning it un-Ready.
 */
class TaskChecksResumeTest {

    /** A task as its runner shows it to a hook, reporting {@code reported} as its checks so far. */
    static final class Reattached implements RunningTask {
        final Task task = new Task();
        final List<CheckStatus> reported;
        final List<List<CheckStatus>> told = new ArrayList<>();
        final List<TaskEvent> events = new ArrayList<>();

        Reattached(List<CheckStatus> reported, Check... checks) {
            this.reported = reported;
            task.setName("server");
            task.setChecks(List.of(checks));
        }

        @Override
        public Task task() {
            return task;
        }

        @Override
        public void restart(String reason) {}

        @Override
        public void restartFailing(String reason) {}

        @Override
        public void signal(String signal, String reason) {}

        @Override
        public ExecProcess exec(ExecRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void checks(List<CheckStatus> checks, TaskEvent event) {
            told.add(checks);
            if (event != null) {
                events.add(event);
            }
        }

        @Override
        public List<CheckStatus> reportedChecks() {
            return reported;
        }

        @Override
        public void event(TaskEvent e) {
            events.add(e);
        }
    }

    static Check check(String name) {
        Check c = new Check(name, CheckType.TCP);
        c.setPort(new IntOrString(5432));
        return c;
    }

    @Test
    void aReattachedProcessGoesOnFromTheChecksItsStateReported() throws Exception {
        FakeProber prober = new FakeProber();
        Reattached task = new Reattached(
                List.of(
                        new CheckStatus("db", Status.PASSING, "connected", "2026-11-27T10:00:00Z"),
                        new CheckStatus("gone", Status.CRITICAL, "from an older spec", "2026-11-27T10:00:00Z")),
                check("db"),
                check("new"));
        TaskChecks checks = new TaskChecks(prober, "default/web", Clock.systemUTC());
        checks.running(task);

        assertThat(task.told.getFirst())
                .as("db resumed as it was; new starts afresh; gone, no longer in the spec, is dropped")
                .extracting(CheckStatus::getName, CheckStatus::getStatus, CheckStatus::getOutput, CheckStatus::getSince)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("db", Status.PASSING, "connected", "2026-11-27T10:00:00Z"),
                        org.assertj.core.groups.Tuple.tuple(
                                "new",
                                Status.CRITICAL,
                                CheckState.NOT_RUN,
                                task.told.getFirst().get(1).getSince()));
        assertThat(task.events).as("nothing changed: no event").isEmpty();

        FakeProber.Probed probing = prober.next();
        probing.push("db", ProbeResult.passing("connected again"));
        assertThat(task.told).as("a check that keeps passing costs nothing").hasSize(1);
        probing.push("db", ProbeResult.critical("connection refused"));
        probing.push("db", ProbeResult.critical("connection refused"));
        probing.push("db", ProbeResult.critical("connection refused"));
        assertThat(task.told.getLast().getFirst().getStatus())
                .as("the resumed check turns critical after failureThreshold failures, as any")
                .isEqualTo(Status.CRITICAL);
        checks.stopped();
    }

    @Test
    void aFreshProcessOrAReportThatNoProbeRanStartsCritical() {
        FakeProber prober = new FakeProber();
        Reattached task = new Reattached(
                List.of(new CheckStatus("db", Status.CRITICAL, CheckState.NOT_RUN, "2026-11-27T10:00:00Z")),
                check("db"));
        TaskChecks checks = new TaskChecks(prober, "default/web", Clock.systemUTC());
        checks.running(task);
        assertThat(task.told.getFirst().getFirst().getOutput()).isEqualTo(CheckState.NOT_RUN);
        assertThat(task.told.getFirst().getFirst().getSince()).isNotEqualTo("2026-11-27T10:00:00Z");
        checks.stopped();
    }
}
