package dev.drover.driver;

/** A driver could not do what was asked of a running task (stop it, reattach to it, read its stats). */
public class DriverException extends Exception {

    public DriverException(String message) {
        super(message);
    }

    public DriverException(String message, Throwable cause) {
        super(message, cause);
    }
}
