package dev.drover.api.v1alpha1;

/** The stage a lifecycle task runs in, relative to the main tasks. */
public enum LifecycleHook {
    Prestart,
    Poststart,
    Poststop
}
