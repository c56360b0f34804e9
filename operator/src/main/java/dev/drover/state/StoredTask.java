package dev.drover.state;

import dev.drover.api.v1alpha1.TaskState;
import java.util.Optional;

/** What the store holds for one task of a restored allocation. */
public record StoredTask(String name, Optional<TaskLocalState> localState, Optional<TaskState> state) {}
