package dev.drover.state;

/**
 * The buckets of the key-value layer. Allocation buckets are keyed by
 * {@code namespace/name}; task buckets by {@code namespace/name/task}.
 */
public enum Bucket {
    /** The allocation spec snapshot the runner was built from. */
    ALLOC("alloc", false),
    /** What the alloc runner made of it (client status, ...). */
    ALLOC_STATE("allocState", false),
    /** Device instances reserved for the allocation. */
    DEVICES("devices", false),
    /** The host ports the allocation holds, by port name. */
    PORTS("ports", false),
    /** The allocation's network as its agent set it up (its namespace, address and plugins' result). */
    NETWORK("network", false),
    /** Task runner local state: driver handle for reattach, hooks done. */
    TASK_LOCAL("taskLocal", true),
    /** The task state as reported in the allocation status. */
    TASK_STATE("taskState", true);

    private final String storedName;
    private final boolean perTask;

    Bucket(String storedName, boolean perTask) {
        this.storedName = storedName;
        this.perTask = perTask;
    }

    /** The name written to disk; stable across releases, unlike the constant's name. */
    public String storedName() {
        return storedName;
    }

    public boolean perTask() {
        return perTask;
    }

    /**
     * The key of the allocation an entry of this bucket belongs to ({@code namespace/name}): a per-task key without
     * its task, else the key itself. A per-task key without a task (never written so; a damaged store) gives "".
     */
    String allocationKey(String key) {
        return perTask ? key.substring(0, Math.max(0, key.lastIndexOf('/'))) : key;
    }

    public static Bucket fromStoredName(String name) {
        for (Bucket b : values()) {
            if (b.storedName.equals(name)) {
                return b;
            }
        }
        throw new IllegalArgumentException("unknown state bucket '" + name + "'");
    }
}
