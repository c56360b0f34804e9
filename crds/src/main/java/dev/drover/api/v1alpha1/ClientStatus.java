package dev.drover.api.v1alpha1;

/** The allocation's state as its node's agent reports it. */
public enum ClientStatus {
    Pending,
    Running,
    Complete,
    Failed,
    Lost;

    /** Complete, Failed and Lost allocations run nothing and never will again. */
    public boolean isTerminal() {
        return this == Complete || this == Failed || this == Lost;
    }
}
