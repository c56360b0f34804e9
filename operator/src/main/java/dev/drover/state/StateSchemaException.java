package dev.drover.state;

/** The store on disk has a layout this binary cannot use (e.g. written by a newer Drover). */
public final class StateSchemaException extends StateStoreException {

    public StateSchemaException(String message) {
        super(message);
    }

    public StateSchemaException(String message, Throwable cause) {
        super(message, cause);
    }
}
