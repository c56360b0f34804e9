package dev.drover.gc;

import java.time.Instant;
import java.util.Optional;

/** An allocation as the collector sees it. */
public interface Collectable {

    String id();

    /** When it became terminal; empty while it still runs (it is never collected then). */
    Optional<Instant> terminalSince();

    /** Removes it for good: tasks, directory, stored state. */
    void destroy() throws Exception;
}
