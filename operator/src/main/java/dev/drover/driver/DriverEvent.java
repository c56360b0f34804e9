package dev.drover.driver;

/**
 * What a driver tells of a task's start besides its result, for the task's events: an image being fetched, fetched
 * (or found on the node), or not fetched.
 *
 * @param message what happened, for the event's message (user text already cut and quoted)
 */
public record DriverEvent(Kind kind, String message) {

    public enum Kind {
        DOWNLOADING,
        DOWNLOADED,
        PULL_FAILED
    }
}
