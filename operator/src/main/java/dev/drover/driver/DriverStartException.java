package dev.drover.driver;

/** Starting a task failed; {@link #recoverable()} says whether trying again may help. */
public final class DriverStartException extends Exception {

    private final boolean recoverable;

    public DriverStartException(String message, boolean recoverable) {
        super(message);
        this.recoverable = recoverable;
    }

    public DriverStartException(String message, boolean recoverable, Throwable cause) {
        super(message, cause);
        this.recoverable = recoverable;
    }

    public boolean recoverable() {
        return recoverable;
    }
}
