package dev.drover.state;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A task runner's own state: what it needs to reattach to a running task and
 * not repeat work after an agent restart.
 *
 * <p>Collections are copied into sorted, unmodifiable ones so equal states
 * always serialize to the same bytes, which is what write deduplication compares.
 *
 * @param driverName   the driver that runs the task
 * @param driverHandle what the driver needs to find the task again (e.g. a pid and its start time);
 *                     null before the task was started
 * @param hooksDone    names of the hooks that completed and must not run again
 */
public record TaskLocalState(String driverName, Map<String, String> driverHandle, Set<String> hooksDone) {

    public TaskLocalState {
        driverHandle = driverHandle == null ? null : Collections.unmodifiableSortedMap(new TreeMap<>(driverHandle));
        hooksDone = Collections.unmodifiableSortedSet(hooksDone == null ? new TreeSet<>() : new TreeSet<>(hooksDone));
    }

    /** Nothing started, no hook done yet. */
    public static TaskLocalState initial(String driverName) {
        return new TaskLocalState(driverName, null, null);
    }

    public TaskLocalState withDriverHandle(Map<String, String> handle) {
        return new TaskLocalState(driverName, handle == null ? null : new TreeMap<>(handle), hooksDone);
    }

    public TaskLocalState withHookDone(String hook) {
        TreeSet<String> done = new TreeSet<>(hooksDone);
        done.add(hook);
        return new TaskLocalState(driverName, driverHandle, done);
    }

    public boolean hookDone(String hook) {
        return hooksDone.contains(hook);
    }
}
