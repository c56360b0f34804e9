package dev.drover.api.v1alpha1;

/** The names a task's {@code user} may take: a POSIX login name or a numeric uid. */
public final class Users {

    /** The longest user name Linux tools accept (useradd's limit). */
    public static final int MAX_LENGTH = 32;

    /**
     * A login name (lower-case letter or '_' first, then lower-case letters, digits, '_' or '-') or a uid of at most
     * ten digits; never anything a command line could read as an option or a path.
     */
    public static final String PATTERN = "^([a-z_][a-z0-9_-]{0,31}|[0-9]{1,10})$";

    /** The largest uid: 2^32 - 2 (2^32 - 1 means "no user" to the kernel). */
    public static final long MAX_UID = 4_294_967_294L;

    private static final java.util.regex.Pattern COMPILED = java.util.regex.Pattern.compile(PATTERN);

    private Users() {}

    /** Whether {@code user} is a name or uid a task may run as. */
    public static boolean isValid(String user) {
        if (user == null || !COMPILED.matcher(user).matches()) {
            return false;
        }
        return !Character.isDigit(user.charAt(0)) || Long.parseLong(user) <= MAX_UID;
    }
}
