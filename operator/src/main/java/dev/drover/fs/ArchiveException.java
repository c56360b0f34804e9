package dev.drover.fs;

import java.io.IOException;

/** An archive that cannot be unpacked safely, or is not one; the message names the stream and the entry. */
public class ArchiveException extends IOException {
    public ArchiveException(String message) {
        super(message);
    }
}
