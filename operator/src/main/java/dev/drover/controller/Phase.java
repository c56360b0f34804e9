package dev.drover.controller;

/**
 * Where a {@link TrackedAllocation} is in its life, and the one place its phases change: {@link #on} gives the phase
 * an {@link Event} leads to. An event that means nothing in a phase (a start slot for an allocation that is already
 * started, a report from a runner of one released) leaves the phase as it is: events come from the watch, the start
 * gate, runner threads and the store's callback, and may cross one another. The machine is drawn in
 * {@link TrackedAllocation}'s javadoc; {@code PhaseTest} holds the whole table.
 */
enum Phase {
    /** Rebuilt from the state store at the agent's start: its runner waits, not run, for the API server. */
    RESTORING,
    /** Seen on the API server, not admitted yet; or its last start failed and it waits for its next change. */
    NEW,
    /** Admitted to the node: waits for a start slot with the newest copy admitted. */
    QUEUED,
    /** Holds a start slot: its spec is stored and its runner created; a copy that comes meanwhile follows. */
    STARTING,
    /** Its spec could not be stored: it waits, admitted, until the store writes again. */
    AWAITING_STORE,
    /** Its runner runs (waiting on a previous allocation and the prestart hooks included). */
    RUNNING,
    /** Its runner's allocation is over (Complete, Failed or Lost): the garbage collector may collect it. */
    TERMINAL,
    /** The node could not fit it when it came: Failed for good, never run. */
    NOT_ADMITTED,
    /** Deleted, replaced, moved to another node, swept or collected: nothing more starts or is reported. */
    RELEASED;

    /** What happens to an allocation, as its phases hear of it. */
    enum Event {
        /** The API server lists a restored allocation. */
        CONFIRMED,
        /** Admitted to the node with a copy to start. */
        ADMITTED,
        /** The node cannot fit its first copy. */
        NOT_FITTED,
        /** The start gate gives it a slot. */
        SLOT,
        /** The start is over and its runner runs. */
        STARTED,
        /** The start is over without a runner: its spec could not be stored. */
        STORE_FAILED,
        /** The start is over without a runner, for another reason (refused, or it threw). */
        START_FAILED,
        /** The state store writes again. */
        STORE_RECOVERED,
        /** Its runner reports the allocation over. */
        ENDED,
        /** Its runner reports the allocation not over (a refused spec, or a restart of it). */
        RESUMED,
        /** The controller lets it go. */
        RELEASED
    }

    /** The phase {@code e} leads to from this one; this one when {@code e} means nothing here. */
    Phase on(Event e) {
        if (e == Event.RELEASED) {
            return RELEASED;
        }
        return switch (this) {
            case RESTORING -> e == Event.CONFIRMED ? RUNNING : this;
            case NEW ->
                switch (e) {
                    case ADMITTED -> QUEUED;
                    case NOT_FITTED -> NOT_ADMITTED;
                    default -> this;
                };
            case QUEUED, AWAITING_STORE ->
                switch (e) {
                    case ADMITTED -> QUEUED;
                    case SLOT -> this == QUEUED ? STARTING : this;
                    case STORE_RECOVERED -> this == AWAITING_STORE ? QUEUED : this;
                    default -> this;
                };
            case STARTING ->
                switch (e) {
                    case STARTED -> RUNNING;
                    case STORE_FAILED -> AWAITING_STORE;
                    case START_FAILED -> NEW;
                    default -> this;
                };
            case RUNNING, TERMINAL ->
                switch (e) {
                    case ENDED -> TERMINAL;
                    case RESUMED -> RUNNING;
                    default -> this;
                };
            case NOT_ADMITTED, RELEASED -> this;
        };
    }

    /** Whether a runner runs for the allocation: a copy admitted now is an update of it. */
    boolean runs() {
        return this == RUNNING || this == TERMINAL;
    }
}
