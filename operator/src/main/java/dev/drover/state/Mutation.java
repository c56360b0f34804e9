package dev.drover.state;

/** One change to the key-value layer; a list of them commits atomically. */
public sealed interface Mutation {

    Bucket bucket();

    /**
     * Sets {@code key} to {@code value}. {@code hash} is the BLAKE2b-256 of
     * {@code value}, computed once by the deduplicating layer and stored with it.
     */
    record Put(Bucket bucket, String key, byte[] value, byte[] hash) implements Mutation {}

    /** Removes {@code key}. */
    record Delete(Bucket bucket, String key) implements Mutation {}

    /** Removes every key that starts with {@code prefix} (a task bucket's entries for one allocation). */
    record DeletePrefix(Bucket bucket, String prefix) implements Mutation {
        public DeletePrefix {
            if (prefix.isEmpty()) {
                throw new IllegalArgumentException("an empty prefix would delete the whole bucket " + bucket);
            }
        }

        boolean matches(String key) {
            return key.startsWith(prefix);
        }
    }

    /**
     * Moves {@code key} out of its bucket into the store's quarantine, with {@code reason}: a value that
     * cannot be read is kept aside for inspection, never deleted, and no longer stops a restore.
     */
    record Quarantine(Bucket bucket, String key, String reason) implements Mutation {}
}
