package dev.drover.state;

/**
 * Counters of a state store since it was opened.
 *
 * @param writes        puts that reached the store (their value had changed)
 * @param deduplicated  puts dropped because the key already held the same value
 * @param deletes       delete operations (an allocation with its tasks counts once)
 * @param transactions  transactions committed; concurrent writes share one
 */
public record StateStats(long writes, long deduplicated, long deletes, long transactions) {
}
