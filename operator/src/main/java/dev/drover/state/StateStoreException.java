package dev.drover.state;

/** The state store could not read or write; the message says which entry and why. */
public class StateStoreException extends RuntimeException {

    public StateStoreException(String message, Throwable cause) {
        super(message, cause);
    }

    public StateStoreException(String message) {
        super(message);
    }
}
