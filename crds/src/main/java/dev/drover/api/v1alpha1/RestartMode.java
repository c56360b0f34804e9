package dev.drover.api.v1alpha1;

/** What happens once a task used up its restart attempts in the interval. */
public enum RestartMode {
    /** The task fails for good. */
    Fail,
    /** The task waits out the rest of the interval, then starts again. */
    Delay
}
