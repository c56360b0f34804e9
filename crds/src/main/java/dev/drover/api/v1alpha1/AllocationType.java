package dev.drover.api.v1alpha1;

/** Decides whether a task that exits 0 is done (Batch) or restarted (Service). */
public enum AllocationType {
    Service,
    Batch
}
