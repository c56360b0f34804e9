package dev.drover.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class DefaultsTest {

    private static AllocationSpec spec(AllocationType type, RestartPolicy policy, Task... tasks) {
        AllocationSpec s = new AllocationSpec();
        s.setNodeName("n");
        s.setType(type);
        s.setRestartPolicy(policy);
        s.setTasks(List.of(tasks));
        return s;
    }

    private static Task task(String name) {
        Task t = new Task();
        t.setName(name);
        t.setDriver("mock");
        return t;
    }

    @Test
    void serviceAndBatchHaveTheirOwnRestartDefaults() {
        Task t = task("t");
        assertThat(spec(null, null, t).effectiveRestartPolicy(t))
                .isEqualTo(new RestartPolicy.Resolved(
                        2, Duration.ofMinutes(30), Duration.ofSeconds(15), RestartMode.Fail));
        assertThat(spec(AllocationType.Batch, null, t).effectiveRestartPolicy(t))
                .isEqualTo(
                        new RestartPolicy.Resolved(3, Duration.ofHours(24), Duration.ofSeconds(15), RestartMode.Fail));
    }

    @Test
    void taskPolicyOverridesTheAllocationsFieldByField() {
        Task t = task("t");
        t.setRestartPolicy(new RestartPolicy(0, null, null, null));
        AllocationSpec s = spec(AllocationType.Service, new RestartPolicy(5, "1h", "2s", RestartMode.Delay), t);
        assertThat(s.effectiveRestartPolicy(t))
                .isEqualTo(
                        new RestartPolicy.Resolved(0, Duration.ofHours(1), Duration.ofSeconds(2), RestartMode.Delay));
        assertThat(s.effectiveRestartPolicy().attempts()).isEqualTo(5);
    }

    @Test
    void taskDefaults() {
        Task t = task("t");
        assertThat(t.effectiveKillTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(t.effectiveKillSignal()).isEqualTo("SIGTERM");
        assertThat(t.effectiveShutdownDelay()).isZero();
        assertThat(t.isLeaderTask()).isFalse();
        assertThat(t.isMain()).isTrue();
        assertThat(t.effectiveConfig()).isEmpty();
        assertThat(t.effectiveEnv()).isEmpty();
        t.setKillTimeout("0s");
        assertThat(t.effectiveKillTimeout()).isZero();
    }

    @Test
    void allocationDefaults() {
        AllocationSpec s = spec(null, null, task("t"));
        assertThat(s.effectiveDesiredStatus()).isEqualTo(DesiredStatus.Run);
        assertThat(s.effectiveType()).isEqualTo(AllocationType.Service);
        assertThat(s.effectiveEphemeralDisk()).isEqualTo(new EphemeralDisk.Resolved(300, false, false));
        s.setEphemeralDisk(new EphemeralDisk(null, true, null));
        assertThat(s.effectiveEphemeralDisk()).isEqualTo(new EphemeralDisk.Resolved(300, true, false));
    }
}
