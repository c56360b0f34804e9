package dev.drover.allocrunner;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.TaskState;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ClientStatusesTest {

    static TaskState state(TaskState.State s, boolean failed) {
        TaskState t = new TaskState();
        t.setState(s);
        t.setFailed(failed);
        return t;
    }

    static final TaskState PENDING = state(TaskState.State.Pending, false);
    static final TaskState RUNNING = state(TaskState.State.Running, false);
    static final TaskState DONE = state(TaskState.State.Dead, false);
    static final TaskState FAILED = state(TaskState.State.Dead, true);

    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of(List.of(FAILED, RUNNING, PENDING), ClientStatus.Failed, "Failed tasks"),
                Arguments.of(List.of(RUNNING, PENDING, DONE), ClientStatus.Running, "Tasks are running"),
                Arguments.of(List.of(PENDING, DONE), ClientStatus.Pending, "No tasks have started"),
                Arguments.of(List.of(DONE, DONE), ClientStatus.Complete, "All tasks have completed"),
                Arguments.of(List.of(PENDING), ClientStatus.Pending, "No tasks have started"),
                Arguments.of(Arrays.asList(new TaskState()), ClientStatus.Pending, "No tasks have started"));
    }

    @ParameterizedTest
    @MethodSource("table")
    void clientStatusFollowsTheTaskStates(List<TaskState> tasks, ClientStatus status, String description) {
        assertThat(ClientStatuses.of(tasks)).isEqualTo(new ClientStatuses.Result(status, description));
    }
}
