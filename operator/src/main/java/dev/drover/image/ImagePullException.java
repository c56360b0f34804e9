package dev.drover.image;

import java.io.IOException;

/** An image could not be pulled; the message says why, for the task's {@code PullFailed} event. */
public final class ImagePullException extends IOException {

    public ImagePullException(String message) {
        super(message);
    }

    public ImagePullException(String message, Throwable cause) {
        super(message, cause);
    }
}
