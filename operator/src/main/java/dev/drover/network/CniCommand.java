package dev.drover.network;

/** What a CNI plugin is asked to do ({@code CNI_COMMAND}). */
public enum CniCommand {
    /** Attach: make the interface, lease the address, add the rules; answers with a result. */
    ADD,
    /** Tell whether what ADD made is still there, given ADD's result. */
    CHECK,
    /** Detach: undo ADD; idempotent, and no failure when what it undoes is gone. */
    DEL
}
