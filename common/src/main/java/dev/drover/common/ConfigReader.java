package dev.drover.common;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a config map strictly (a task driver's, a device plugin's): every key
 * must be known, every value of the right type, durations in {@link Durations}'
 * grammar. Problems are collected as messages naming the key, so a user sees
 * them all at once; a value that is absent or wrong reads as null.
 */
public final class ConfigReader {

    private final Map<String, Object> config;
    private final Set<String> known = new LinkedHashSet<>();
    private final List<String> problems = new ArrayList<>();

    public ConfigReader(Map<String, Object> config) {
        this.config = config == null ? Map.of() : config;
    }

    public String string(String key) {
        Object v = take(key);
        if (v == null || v instanceof String) {
            return (String) v;
        }
        problems.add("config." + key + ": " + describe(v) + " is not a string");
        return null;
    }

    public Integer integer(String key) {
        Object v = take(key);
        if (v == null) {
            return null;
        }
        if (isInt(v)) {
            return ((Number) v).intValue();
        }
        problems.add("config." + key + ": " + describe(v) + " is not a whole number");
        return null;
    }

    public Boolean bool(String key) {
        Object v = take(key);
        if (v == null || v instanceof Boolean) {
            return (Boolean) v;
        }
        problems.add("config." + key + ": " + describe(v) + " is not true or false");
        return null;
    }

    public Duration duration(String key) {
        Object v = take(key);
        if (v == null) {
            return null;
        }
        if (v instanceof String s) {
            try {
                return Durations.parse(s);
            } catch (IllegalArgumentException e) {
                problems.add("config." + key + ": " + e.getMessage());
                return null;
            }
        }
        problems.add("config." + key + ": " + describe(v) + " is not a duration (use e.g. 30s, 1h30m)");
        return null;
    }

    public List<Integer> integers(String key) {
        Object v = take(key);
        if (v == null) {
            return null;
        }
        if (v instanceof List<?> list && list.stream().allMatch(ConfigReader::isInt)) {
            return list.stream().map(e -> ((Number) e).intValue()).toList();
        }
        problems.add("config." + key + ": " + describe(v) + " is not a list of whole numbers");
        return null;
    }

    public List<String> strings(String key) {
        Object v = take(key);
        if (v == null) {
            return null;
        }
        if (v instanceof List<?> list && list.stream().allMatch(e -> e instanceof String)) {
            return list.stream().map(String.class::cast).toList();
        }
        problems.add("config." + key + ": " + describe(v) + " is not a list of strings");
        return null;
    }

    /**
     * A list whose items are strings or whole numbers (a YAML list such as {@code [0, GPU-8a3c...]}), each
     * given as text; null when absent or wrong.
     */
    public List<String> words(String key) {
        Object v = take(key);
        if (v == null) {
            return null;
        }
        if (v instanceof List<?> list && list.stream().allMatch(e -> e instanceof String || isInt(e))) {
            return list.stream()
                    .map(e -> e instanceof String s ? s : String.valueOf(((Number) e).longValue()))
                    .toList();
        }
        problems.add("config." + key + ": " + describe(v) + " is not a list of names or numbers");
        return null;
    }

    /** A map with text keys (a nested section of the config), its values as they are; null when absent or wrong. */
    public Map<String, Object> map(String key) {
        Object v = take(key);
        if (v == null) {
            return null;
        }
        if (v instanceof Map<?, ?> m && m.keySet().stream().allMatch(k -> k instanceof String)) {
            Map<String, Object> out = new java.util.LinkedHashMap<>();
            m.forEach((k, value) -> out.put((String) k, value));
            return out;
        }
        problems.add("config." + key + ": " + describe(v) + " is not a map of names to values");
        return null;
    }

    /** The value as it is, for a key whose nested shape the caller reads itself; null when absent. */
    public Object raw(String key) {
        return take(key);
    }

    /** Records a problem found by the driver itself (a missing key, a bad combination). */
    public void problem(String message) {
        problems.add(message);
    }

    /** Every problem, unknown keys included; call after reading all known keys. */
    public List<String> problems() {
        List<String> out = new ArrayList<>(problems);
        List<String> unknown =
                config.keySet().stream().filter(key -> !known.contains(key)).toList();
        String knownKeys = " (known: " + String.join(", ", known) + ")";
        if (unknown.size() == 1) {
            out.add("config." + UserText.bare(unknown.getFirst()) + ": unknown key" + knownKeys);
        } else if (!unknown.isEmpty()) {
            // one problem for them all: a config of 100 000 unknown keys gives one line, not 100 000
            out.add("config: " + unknown.size() + " unknown keys: "
                    + UserText.join(unknown.stream().map(UserText::quote).toList(), ", ") + knownKeys);
        }
        return out;
    }

    private Object take(String key) {
        known.add(key);
        return config.get(key);
    }

    private static boolean isInt(Object v) {
        return v instanceof Number n
                && n.doubleValue() == Math.rint(n.doubleValue())
                && n.longValue() >= Integer.MIN_VALUE
                && n.longValue() <= Integer.MAX_VALUE;
    }

    private static String describe(Object v) {
        return UserText.value(v);
    }
}
