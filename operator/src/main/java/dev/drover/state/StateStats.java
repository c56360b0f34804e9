package dev.drover.state;

/**
 * Counters of a state store since it was opened.
 *
 * @param writes        puts that reached the store (their value had changed)
 * @param deduplicated  puts dropped because the key already held the same value
 * @param deletes       delete operations (an allocation with its tasks counts once)
 * @param transactions  transactions committed; concurrent writes share one
 * @param failures      writes the store failed (each attempt counts); they are kept and tried again
 * @param unstored      values and deletions waiting now to be written again
 * @param quarantined   entries that could not be read at restore and were moved aside
 */
public record StateStats(
        long writes,
        long deduplicated,
        long deletes,
        long transactions,
        long failures,
        long unstored,
        long quarantined) {}
