package dev.drover.allocwatcher;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An allocation that claims a previous allocation's disk: its name and uid ({@code uid} tells it from a later
 * allocation of the same name; empty only where there is no API server, in tests).
 */
public record Claimant(String name, String uid) {

    /** A DNS subdomain (an allocation's name), then optionally {@code /} and a uid's characters. */
    private static final Pattern VALUE =
            Pattern.compile("([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)(/([A-Za-z0-9-]{1,128}))?");

    public Claimant {
        uid = uid == null ? "" : uid;
        if (!VALUE.matcher(name + (uid.isEmpty() ? "" : "/" + uid)).matches()) {
            throw new IllegalArgumentException("not an allocation name and uid: " + name + "/" + uid);
        }
    }

    /** What a claim holds: {@code NAME/UID}, or the name alone when there is no uid. */
    public String value() {
        return uid.isEmpty() ? name : name + "/" + uid;
    }

    /** The claimant a stored claim names, or empty when it is not one. */
    static Optional<Claimant> parse(String value) {
        var m = VALUE.matcher(value);
        return m.matches() ? Optional.of(new Claimant(m.group(1), m.group(4))) : Optional.empty();
    }
}
