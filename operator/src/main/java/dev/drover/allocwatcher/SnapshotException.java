package dev.drover.allocwatcher;

import java.io.IOException;

/** A snapshot that cannot be unpacked safely, or is not a tar stream; the message names the entry. */
public final class SnapshotException extends IOException {
    public SnapshotException(String message) {
        super(message);
    }
}
