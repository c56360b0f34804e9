package dev.drover.devices.cdi;

/** A CDI spec file that is refused, or CDI device names that cannot be resolved; the message says which and why. */
public final class CdiException extends Exception {

    public CdiException(String message) {
        super(message);
    }
}
