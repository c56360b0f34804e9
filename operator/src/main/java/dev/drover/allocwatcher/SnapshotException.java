package dev.drover.allocwatcher;

import dev.drover.fs.ArchiveException;

/** A snapshot that cannot be unpacked safely, or is not a tar stream; the message names the entry. */
public final class SnapshotException extends ArchiveException {
    public SnapshotException(String message) {
        super(message);
    }
}
