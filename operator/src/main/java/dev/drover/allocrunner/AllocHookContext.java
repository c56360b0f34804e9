package dev.drover.allocrunner;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What alloc hooks see of their runner.
 *
 * @param restored whether the runner was rebuilt from the store after its prerun work was done (a task of it had
 *                 started); one rebuilt before that, e.g. while it waited for its previous allocation, runs the
 *                 prerun hooks again
 * @param warnings where a warning about the whole allocation goes: a Warning Kubernetes Event
 */
public record AllocHookContext(
        AllocId id,
        Supplier<Allocation> alloc,
        AllocDir dir,
        Path dataDir,
        StateDB stateDB,
        InstantSource clock,
        BooleanSupplier stopping,
        Consumer<TaskEvent> toEveryTask,
        Supplier<List<String>> taskNames,
        boolean restored,
        Warnings warnings) {

    /** Where a hook reports a warning about the whole allocation ({@link AllocStateListener#allocWarning}). */
    @FunctionalInterface
    public interface Warnings {
        void warn(String reason, String message);
    }
}
