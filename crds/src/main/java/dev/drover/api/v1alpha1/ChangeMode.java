package dev.drover.api.v1alpha1;

/** What a running task gets when a Secret or ConfigMap it refers to changes (its files are updated either way). */
public enum ChangeMode {
    /** Nothing: files change in place, environment values at the task's next start (as for a Pod). */
    Noop,
    /** The task is restarted once with the new values, not counted against its restart policy. */
    Restart,
    /** The task is sent {@code changeSignal}. */
    Signal
}
