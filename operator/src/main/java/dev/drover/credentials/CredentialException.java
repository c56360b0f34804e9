package dev.drover.credentials;

/**
 * Why a token or an object could not be had. The message names the object and the API server's reason (escaped and
 * cut by whoever builds it); it never carries a token or a value.
 */
public final class CredentialException extends Exception {

    /** What went wrong, as far as the task's setup cares. */
    public enum Reason {
        /** The object does not exist (404): skipped when optional. */
        NOT_FOUND,
        /** The ServiceAccount may not read it, or the agent may not mint for it (401/403). */
        FORBIDDEN,
        /** The request itself is wrong (400/422): retrying does not help. */
        INVALID,
        /** The API server could not be reached or answered 5xx/429: worth retrying. */
        UNAVAILABLE
    }

    private final Reason reason;

    public CredentialException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public CredentialException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
