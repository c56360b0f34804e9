package dev.drover.common;

import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * User values as messages show them. Conditions, task events and Kubernetes
 * Events name values from a spec, and a hostile spec's value may be megabytes
 * long or hold control characters: every such value goes through here, quoted,
 * control characters escaped, and cut at {@link #LIMIT} characters saying how
 * long it was. Whole messages and lists of problems are bounded here too.
 */
public final class UserText {

    /** Longest value shown whole in a message. */
    public static final int LIMIT = 100;
    /** Items of a list a message names before it says "and N more". */
    public static final int LIST_LIMIT = 10;

    private UserText() {}

    /** {@code "value"}, escaped; a longer one is cut: {@code "xxx…"... (5000 characters)}; null is {@code (none)}. */
    public static String quote(String s) {
        if (s == null) {
            return "(none)";
        }
        StringBuilder out = new StringBuilder("\"");
        escape(s, Math.min(s.length(), LIMIT), out);
        out.append('"');
        if (s.length() > LIMIT) {
            out.append("... (").append(s.length()).append(" characters)");
        }
        return out.toString();
    }

    /**
     * Any value of a config (a string, a number, a map, a list) as a message shows it: strings quoted,
     * others as Java writes them ({@code {a=1}}, {@code [x, y]}), escaped and cut at {@link #LIMIT} characters.
     * A cut map or list says how many entries it had; it is never rendered whole first.
     */
    public static String value(Object v) {
        if (v instanceof String s) {
            return quote(s);
        }
        StringBuilder raw = new StringBuilder();
        boolean whole = render(v, raw);
        StringBuilder out = new StringBuilder();
        escape(raw, Math.min(raw.length(), LIMIT), out);
        if (!whole) {
            out.append("... (").append(size(v)).append(')');
        }
        return out.toString();
    }

    /** {@code s} without control characters, cut at {@link #LIMIT}: for a name shown without quotes. */
    public static String bare(String s) {
        StringBuilder out = new StringBuilder();
        escape(s, Math.min(s.length(), LIMIT), out);
        if (s.length() > LIMIT) {
            out.append("... (").append(s.length()).append(" characters)");
        }
        return out.toString();
    }

    /** A whole message cut at {@code max} characters, saying how long it was. */
    public static String cut(String message, int max) {
        if (message == null || message.length() <= max) {
            return message;
        }
        String tail = "... (" + message.length() + " characters)";
        return message.substring(0, Math.max(0, max - tail.length())) + tail;
    }

    /**
     * A whole message, its control and format characters escaped ({@code \\u001b}), cut at {@code max} characters
     * and saying how long it was: for text that reached the agent from elsewhere (an exception, a server's answer).
     */
    public static String cutEscaped(String message, int max) {
        if (message == null) {
            return null;
        }
        StringBuilder out = new StringBuilder();
        escape(message, Math.min(message.length(), max), out);
        if (message.length() <= max && out.length() <= max) {
            return out.toString();
        }
        String tail = "... (" + message.length() + " characters)";
        return out.substring(0, Math.max(0, Math.min(out.length(), max - tail.length()))) + tail;
    }

    /** The first {@link #LIST_LIMIT} items joined by {@code separator}, then "and N more". */
    public static String join(List<String> items, String separator) {
        if (items.size() <= LIST_LIMIT) {
            return String.join(separator, items);
        }
        return String.join(separator, items.subList(0, LIST_LIMIT)) + separator + "and " + (items.size() - LIST_LIMIT)
                + " more";
    }

    /**
     * Characters a terminal or a reader does not show as themselves: C0 and C1 controls (ESC, CSI), line and
     * paragraph separators, and format characters (bidirectional overrides that reorder what follows, zero-width
     * ones).
     */
    private static boolean hidden(char c) {
        return c < 0x20
                || (c >= 0x7f && c <= 0x9f)
                || c == 0x2028
                || c == 0x2029
                || Character.getType(c) == Character.FORMAT;
    }

    private static void escape(CharSequence s, int end, StringBuilder out) {
        for (int i = 0; i < end; i++) {
            char c = s.charAt(i);
            if (hidden(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
    }

    /** Appends {@code v}, stopping once the text passes {@link #LIMIT}; false when it did. */
    private static boolean render(Object v, StringBuilder out) {
        if (out.length() > LIMIT) {
            return false; // each level adds a bracket, so this also bounds how deep it goes
        }
        if (v instanceof Map<?, ?> m) {
            out.append('{');
            String separator = "";
            for (Map.Entry<?, ?> e : m.entrySet()) {
                out.append(separator);
                separator = ", ";
                if (!render(e.getKey(), out) || !render("=", out) || !render(e.getValue(), out)) {
                    return false;
                }
            }
            out.append('}');
        } else if (v instanceof Collection<?> c) {
            out.append('[');
            String separator = "";
            for (Object o : c) {
                out.append(separator);
                separator = ", ";
                if (!render(o, out)) {
                    return false;
                }
            }
            out.append(']');
        } else {
            String s = String.valueOf(v);
            out.append(s, 0, Math.min(s.length(), Math.max(0, LIMIT + 1 - out.length())));
        }
        return out.length() <= LIMIT;
    }

    private static String size(Object v) {
        if (v instanceof Map<?, ?> m) {
            return "a map of " + m.size() + " entries";
        }
        if (v instanceof Collection<?> c) {
            return "a list of " + c.size() + " items";
        }
        return String.valueOf(v).length() + " characters";
    }
}
