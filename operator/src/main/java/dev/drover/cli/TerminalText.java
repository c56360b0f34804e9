package dev.drover.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * Text for a person at a terminal: strings from the API made harmless (anyone
 * who can write an Allocation or an Event chooses them, and a control character
 * reaches the terminal as a command), times as UTC or as "3m12s ago", and rows
 * laid out in aligned columns.
 */
public final class TerminalText {

    /** The most characters one value shows; longer ones end in {@code …}. */
    static final int MAX = 200;
    /** What a missing value shows. */
    public static final String NONE = "<none>";

    private static final int COLUMN_GAP = 2;

    private TerminalText() {}

    /**
     * {@code s} with every control, format (bidi overrides, zero-width) and line
     * separator character written as an escape ({@code \n}, {@code \u001B}), cut
     * to {@link #MAX} characters; {@link #NONE} for null.
     */
    public static String clean(String s) {
        return clean(s, MAX);
    }

    /**
     * {@code s} with every unsafe character escaped as {@link #clean(String)} does, whole: for a message whose parts
     * were cut already, and whose end (the HTTP status) must show.
     */
    static String escaped(String s) {
        return clean(s, Integer.MAX_VALUE - 1);
    }

    private static String clean(String s, int max) {
        if (s == null) {
            return NONE;
        }
        StringBuilder out = new StringBuilder();
        int shown = 0;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            String piece = isUnsafe(cp) ? escape(cp) : Character.toString(cp);
            boolean more = i < s.length();
            // keep room for the ellipsis, unless this is the last piece and it fits
            if (shown + length(piece) > max - (more ? 1 : 0)) {
                return out.append('…').toString();
            }
            out.append(piece);
            shown += length(piece);
        }
        return out.toString();
    }

    private static boolean isUnsafe(int cp) {
        return switch (Character.getType(cp)) {
            case Character.CONTROL,
                    Character.FORMAT,
                    Character.LINE_SEPARATOR,
                    Character.PARAGRAPH_SEPARATOR,
                    Character.SURROGATE -> true;
            default -> false;
        };
    }

    private static String escape(int cp) {
        return switch (cp) {
            case '\n' -> "\\n";
            case '\r' -> "\\r";
            case '\t' -> "\\t";
            default -> cp > 0xFFFF ? String.format("\\u{%X}", cp) : String.format("\\u%04X", cp);
        };
    }

    /** An RFC 3339 time, or null when {@code text} is missing or not one. */
    static Instant parseTime(String text) {
        if (text == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    /** {@code 2026-11-22T10:00:01Z}: UTC, whole seconds. */
    static String utc(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** The RFC 3339 time {@code text} as {@link #utc}; anything else cleaned as it is. */
    static String utc(String text) {
        Instant t = parseTime(text);
        return t == null ? clean(text) : utc(t);
    }

    /** {@code 40s ago}, {@code 3m12s ago}, {@code 2h5m ago}, {@code 4d3h ago}; {@code in 5s} for a future time. */
    static String ago(Instant then, Instant now) {
        Duration d = Duration.between(then, now);
        return d.isNegative() ? "in " + humanize(d.negated()) : humanize(d) + " ago";
    }

    /** The RFC 3339 time {@code text} as {@link #ago}; anything else cleaned as it is. */
    static String ago(String text, Instant now) {
        Instant t = parseTime(text);
        return t == null ? clean(text) : ago(t, now);
    }

    /** The two largest units, whole: {@code 0s}, {@code 59s}, {@code 3m12s}, {@code 2h}, {@code 4d3h}. */
    static String humanize(Duration d) {
        long seconds = d.toSeconds();
        long days = seconds / 86_400;
        long hours = seconds % 86_400 / 3_600;
        long minutes = seconds % 3_600 / 60;
        long secs = seconds % 60;
        if (days > 0) {
            return days + "d" + (hours > 0 ? hours + "h" : "");
        }
        if (hours > 0) {
            return hours + "h" + (minutes > 0 ? minutes + "m" : "");
        }
        if (minutes > 0) {
            return minutes + "m" + (secs > 0 ? secs + "s" : "");
        }
        return secs + "s";
    }

    /**
     * {@code Key   = value} lines with the {@code =} aligned; a value of several
     * lines continues under its first.
     */
    static String keyValues(List<String[]> pairs) {
        int width = pairs.stream().mapToInt(p -> length(p[0])).max().orElse(0);
        StringBuilder out = new StringBuilder();
        for (String[] p : pairs) {
            String indent = " ".repeat(width + 3);
            out.append(pad(p[0], width))
                    .append(" = ")
                    .append(p[1].replace("\n", "\n" + indent))
                    .append('\n');
        }
        return out.toString();
    }

    /** Rows whose cells are padded to their column's widest, two spaces apart; the last column is not padded. */
    public static String columns(List<String[]> rows) {
        int count = rows.stream().mapToInt(r -> r.length).max().orElse(0);
        int[] widths = new int[count];
        for (String[] row : rows) {
            for (int c = 0; c < row.length; c++) {
                widths[c] = Math.max(widths[c], length(row[c]));
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < row.length; c++) {
                line.append(c == row.length - 1 ? row[c] : pad(row[c], widths[c] + COLUMN_GAP));
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    private static String pad(String s, int width) {
        return s + " ".repeat(Math.max(0, width - length(s)));
    }

    private static int length(String s) {
        return s.codePointCount(0, s.length());
    }
}
