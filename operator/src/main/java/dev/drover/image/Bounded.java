package dev.drover.image;

import java.io.IOException;
import java.io.InputStream;

/** Reads answers whole, but never more than a bound. */
final class Bounded {

    private Bounded() {}

    /** All of {@code in}; throws, naming {@code what}, when it holds more than {@code max} bytes. */
    static byte[] read(InputStream in, int max, String what) throws IOException {
        byte[] bytes = in.readNBytes(max + 1);
        if (bytes.length > max) {
            throw new ImagePullException(what + " is larger than " + max + " bytes: refused");
        }
        return bytes;
    }

    /** At most {@code max} bytes of {@code in}. */
    static byte[] readSome(InputStream in, int max) throws IOException {
        return in.readNBytes(max);
    }
}
