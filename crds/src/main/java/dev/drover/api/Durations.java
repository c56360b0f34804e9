package dev.drover.api;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as Allocations spell them: Go's form, a sequence of decimal numbers
 * each with a unit ({@code 1h30m}, {@code 15s}, {@code 250ms}, {@code 1.5h}).
 * Units: ns, us (or µs), ms, s, m, h. A bare {@code 0} is zero. Negative
 * durations are not accepted: nothing in the API can use one.
 */
public final class Durations {

    /** The same grammar as {@link #parse}, for OpenAPI patterns and CEL. */
    public static final String PATTERN = "^(0|([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$";

    private static final Pattern TERM = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ns|us|µs|ms|s|m|h)");
    private static final Pattern WHOLE = Pattern.compile(PATTERN);

    private Durations() {
    }

    /**
     * Parses {@code text}; throws {@link IllegalArgumentException} with a message
     * that shows the value and the expected form.
     */
    public static Duration parse(String text) {
        Objects.requireNonNull(text, "duration");
        if (!WHOLE.matcher(text).matches()) {
            throw new IllegalArgumentException(
                    "\"" + text + "\" is not a duration (use a number with a unit: ns, us, ms, s, m, h; e.g. 250ms, 15s, 1h30m)");
        }
        if (text.equals("0")) {
            return Duration.ZERO;
        }
        BigDecimal nanos = BigDecimal.ZERO;
        Matcher m = TERM.matcher(text);
        while (m.find()) {
            nanos = nanos.add(new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(nanosPerUnit(m.group(2)))));
        }
        try {
            return Duration.ofNanos(nanos.setScale(0, java.math.RoundingMode.DOWN).longValueExact());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("\"" + text + "\" is too long a duration (at most about 292 years)");
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

    private static long nanosPerUnit(String unit) {
        return switch (unit) {
            case "ns" -> 1L;
            case "us", "µs" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> throw new IllegalArgumentException("unknown unit " + unit);
        };
    }
}
