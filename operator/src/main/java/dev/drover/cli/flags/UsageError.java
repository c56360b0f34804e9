package dev.drover.cli.flags;

/**
 * A command line that cannot be used, said in one sentence; programs exit 2 with it and their usage. {@link #flag()}
 * names the flag that was not known, when that was the fault.
 */
public final class UsageError extends Exception {

    private final String flag;

    public UsageError(String message) {
        this(message, null);
    }

    UsageError(String message, String flag) {
        super(message);
        this.flag = flag;
    }

    /** The flag no table knew, as written (without any {@code =value}); null for other faults. */
    public String flag() {
        return flag;
    }
}
