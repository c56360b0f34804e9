package dev.drover.api.v1alpha1;

/** What the user wants of the allocation: keep it running, or stop its tasks and keep its files. */
public enum DesiredStatus {
    Run,
    Stop
}
