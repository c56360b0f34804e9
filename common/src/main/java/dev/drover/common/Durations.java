package dev.drover.common;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Objects;

/**
 * The one duration grammar of Drover: Allocations, agent flags, device plugin
 * configuration and fake device files all read durations here. Go's form, a
 * sequence of decimal numbers each with a unit ({@code 1h30m}, {@code 15s},
 * {@code 250ms}, {@code 1.5h}), because the CRD's CEL rules read the same
 * values with Kubernetes' {@code duration()}, which knows only that form.
 * Units: ns, us (or µs), ms, s, m, h. A bare {@code 0} is zero. Negative
 * durations are not accepted: nothing in the API can use one.
 */
public final class Durations {

    /** The same grammar as {@link #parse}, for OpenAPI patterns and CEL. */
    public static final String PATTERN = "^(0|([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$";

    /** Longest duration text accepted; {@code 2562047h47m16.854775807s}, the longest useful one, has 24. */
    public static final int MAX_LENGTH = 64;

    private Durations() {}

    /**
     * Parses {@code text}; throws {@link IllegalArgumentException} with a message
     * that shows the value (cut when long) and the expected form. A scanner, not a
     * regex: Java's regex engine recurses once per term and a long value overflowed the stack.
     */
    public static Duration parse(String text) {
        Objects.requireNonNull(text, "duration");
        if (text.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(UserText.quote(text) + " is too long for a duration (at most "
                    + MAX_LENGTH + " characters; e.g. 250ms, 15s, 1h30m)");
        }
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        BigDecimal nanos = BigDecimal.ZERO;
        int i = 0;
        int n = text.length();
        while (i < n) {
            int start = i;
            while (i < n && isDigit(text.charAt(i))) {
                i++;
            }
            if (i < n && text.charAt(i) == '.' && i > start) {
                int dot = ++i;
                while (i < n && isDigit(text.charAt(i))) {
                    i++;
                }
                if (i == dot) {
                    throw malformed(text);
                }
            }
            if (i == start) {
                throw malformed(text);
            }
            BigDecimal number = new BigDecimal(text.substring(start, i));
            long unit = 0;
            if (text.startsWith("ns", i)) {
                unit = 1L;
            } else if (text.startsWith("us", i) || text.startsWith("µs", i)) {
                unit = 1_000L;
            } else if (text.startsWith("ms", i)) {
                unit = 1_000_000L;
            }
            if (unit != 0) {
                i += 2;
            } else if (i < n && text.charAt(i) == 's') {
                unit = 1_000_000_000L;
                i++;
            } else if (i < n && text.charAt(i) == 'm') {
                unit = 60_000_000_000L;
                i++;
            } else if (i < n && text.charAt(i) == 'h') {
                unit = 3_600_000_000_000L;
                i++;
            } else {
                throw malformed(text);
            }
            nanos = nanos.add(number.multiply(BigDecimal.valueOf(unit)));
        }
        if (n == 0) {
            throw malformed(text);
        }
        try {
            return Duration.ofNanos(
                    nanos.setScale(0, java.math.RoundingMode.DOWN).longValueExact());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(
                    UserText.quote(text) + " is too long a duration (at most about 292 years)");
        }
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static IllegalArgumentException malformed(String text) {
        return new IllegalArgumentException(UserText.quote(text)
                + " is not a duration (use a number with a unit: ns, us, ms, s, m, h; e.g. 250ms, 15s, 1h30m)"
                + isoHint(text));
    }

    /**
     * Device files once also took ISO-8601 ({@code PT10S}); such a value is refused with its Go form, so the fix
     * is one copy. {@code text} is at most {@link #MAX_LENGTH} long here.
     */
    private static String isoHint(String text) {
        if (!text.startsWith("P") && !text.startsWith("p")) {
            return "";
        }
        try {
            Duration d = Duration.parse(text);
            return d.isNegative() ? "" : "; write " + UserText.quote(text) + " as " + format(d);
        } catch (RuntimeException e) {
            return "";
        }
    }

    /** Whether {@code text} parses as a duration. */
    public static boolean isValid(String text) {
        if (text == null) {
            return false;
        }
        try {
            parse(text);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * The shortest form that parses back to exactly {@code d}: each non-zero
     * unit from hours down to nanoseconds ({@code 1h30m}, {@code 15s},
     * {@code 1s500ms}); zero is {@code 0s}.
     */
    public static String format(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("negative duration " + d);
        }
        if (d.isZero()) {
            return "0s";
        }
        long total = d.toNanos();
        StringBuilder out = new StringBuilder();
        long[] sizes = {3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L, 1L};
        String[] units = {"h", "m", "s", "ms", "us", "ns"};
        for (int i = 0; i < sizes.length; i++) {
            long count = total / sizes[i];
            if (count > 0) {
                out.append(count).append(units[i]);
                total -= count * sizes[i];
            }
        }
        return out.toString();
    }
}
