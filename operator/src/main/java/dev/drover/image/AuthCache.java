package dev.drover.image;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code Authorization} headers a registry client won, each for one registry, one repository and one set of
 * credentials (or none): a token one task's Secret earned is never sent for another's pull, whose credentials the
 * registry must judge itself. Entries live until they expire; at most {@link #MAX_ENTRIES} are kept, the least
 * recently used going first, so a node pulling from many repositories with many Secrets holds a bounded number.
 */
final class AuthCache {

    /** The most headers kept. */
    static final int MAX_ENTRIES = 4096;

    /**
     * What a header was won for.
     *
     * @param credentials the fingerprint of the credentials it was won with; empty for an anonymous pull
     */
    record Key(String authority, String repository, String credentials) {
        static Key of(String authority, String repository, Optional<RegistryCredentials> creds) {
            return new Key(
                    authority,
                    repository,
                    creds.map(RegistryCredentials::fingerprint).orElse(""));
        }
    }

    private record Entry(String header, Instant expires) {}

    private final InstantSource clock;
    private final int max;
    /** In access order. Guarded by {@code this}. */
    private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(64, 0.75f, true);

    AuthCache(InstantSource clock) {
        this(clock, MAX_ENTRIES);
    }

    AuthCache(InstantSource clock, int max) {
        this.clock = clock;
        this.max = max;
    }

    /** The header won for {@code key} that has not expired, or null. */
    synchronized String get(Key key) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        if (!e.expires().isAfter(clock.instant())) {
            entries.remove(key);
            return null;
        }
        return e.header();
    }

    /** Keeps {@code header} for {@code key} until {@code expires}; makes room first when full. */
    synchronized void put(Key key, String header, Instant expires) {
        entries.put(key, new Entry(header, expires));
        if (entries.size() > max) {
            Instant now = clock.instant();
            entries.values().removeIf(e -> !e.expires().isAfter(now));
            for (Iterator<Map.Entry<Key, Entry>> it = entries.entrySet().iterator();
                    entries.size() > max && it.hasNext(); ) {
                it.next();
                it.remove();
            }
        }
    }

    /** Forgets the header for {@code key}: the registry refused it. */
    synchronized void forget(Key key) {
        entries.remove(key);
    }

    synchronized int size() {
        return entries.size();
    }
}
