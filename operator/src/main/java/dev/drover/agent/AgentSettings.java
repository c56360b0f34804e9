package dev.drover.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.drover.common.Durations;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Looks a setting up in flags, then environment, then the YAML file. */
record AgentSettings(AgentFlags flags, Map<String, String> env, JsonNode file) {

    Optional<String> text(String key, String flag, String envName) {
        if (flag != null && flags.values().containsKey(flag)) {
            return Optional.of(flags.values().get(flag));
        }
        if (envName != null) {
            Optional<String> v = nonBlank(env.get(envName));
            if (v.isPresent()) {
                return v;
            }
        }
        JsonNode n = fileValue(key);
        return n == null || n.isNull() ? Optional.empty() : Optional.of(n.asText());
    }

    JsonNode fileValue(String key) {
        if (file == null) {
            return null;
        }
        JsonNode n = file;
        for (String part : key.split("\\.")) {
            n = n.get(part);
            if (n == null) {
                return null;
            }
        }
        return n;
    }

    Optional<Boolean> bool(String key, String flag, String envName) throws ConfigException {
        Optional<String> v = text(key, flag, envName);
        if (v.isEmpty()) {
            return Optional.empty();
        }
        return switch (v.get().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> Optional.of(true);
            case "false", "0", "no" -> Optional.of(false);
            default -> throw new ConfigException(key + ": \"" + v.get() + "\" is not a boolean (true or false)");
        };
    }

    Optional<Integer> integer(String key, String flag, String envName) throws ConfigException {
        Optional<String> v = text(key, flag, envName);
        try {
            return v.map(Integer::parseInt);
        } catch (NumberFormatException e) {
            throw new ConfigException(key + ": \"" + v.get() + "\" is not a whole number");
        }
    }

    Optional<Double> number(String key) throws ConfigException {
        return number(key, "");
    }

    Optional<Double> fraction(String key) throws ConfigException {
        return number(key, " (a fraction such as 0.8)");
    }

    private Optional<Double> number(String key, String example) throws ConfigException {
        Optional<String> v = text(key, null, null);
        try {
            return v.map(Double::parseDouble);
        } catch (NumberFormatException e) {
            throw new ConfigException(key + ": \"" + v.get() + "\" is not a number" + example);
        }
    }

    /** A duration that may be {@code 0} (off), from the file only. */
    Optional<Duration> durationOrZero(String key) throws ConfigException {
        Optional<String> v = text(key, null, null);
        if (v.isPresent() && v.get().strip().equals("0")) {
            return Optional.of(Duration.ZERO);
        }
        return duration(key, null, null);
    }

    Optional<Duration> duration(String key, String flag, String envName) throws ConfigException {
        Optional<String> v = text(key, flag, envName);
        if (v.isEmpty()) {
            return Optional.empty();
        }
        try {
            Duration d = Durations.parse(v.get());
            if (d.isNegative() || d.isZero()) {
                throw new ConfigException(key + ": " + v.get() + " must be positive");
            }
            return Optional.of(d);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(key + ": \"" + v.get() + "\" is not a duration (such as 30s, 1m, 250ms)");
        }
    }

    private static Optional<String> nonBlank(String s) {
        return s == null || s.isBlank() ? Optional.empty() : Optional.of(s.trim());
    }
}
