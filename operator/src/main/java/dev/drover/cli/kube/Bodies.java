package dev.drover.cli.kube;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An answer's body read whole, bounded in size and in time: a server that trickles a byte a minute, or sends without
 * end, ends the read with an IOException instead of holding the command (the wait for an answer to begin has its own
 * timeout; this one covers the rest). A timer closes the stream at the deadline, which wakes the blocked read.
 */
public final class Bodies {

    private Bodies() {}

    /** At most {@code max} bytes of {@code in}, all read within {@code within}; more, or later, is an IOException. */
    public static byte[] read(InputStream in, int max, Duration within) throws IOException {
        byte[] bytes = head(in, max + 1, within);
        if (bytes.length > max) {
            throw new IOException(
                    "the answer is larger than " + (max >= 1 << 20 ? (max >> 20) + " MiB" : (max >> 10) + " KiB"));
        }
        return bytes;
    }

    /** The first {@code max} bytes of {@code in} (fewer when it ends first), read within {@code within}. */
    public static byte[] head(InputStream in, int max, Duration within) throws IOException {
        AtomicBoolean late = new AtomicBoolean();
        Thread timer = Thread.ofVirtual().name("answer-deadline").start(() -> {
            try {
                Thread.sleep(within);
                late.set(true);
                in.close();
            } catch (InterruptedException | IOException e) {
                // read in time, or already closed
            }
        });
        byte[] bytes;
        try {
            bytes = in.readNBytes(max);
        } catch (IOException e) {
            if (late.get()) {
                throw slow(within);
            }
            throw e;
        } finally {
            timer.interrupt();
            join(timer);
        }
        if (late.get()) {
            throw slow(within);
        }
        return bytes;
    }

    private static IOException slow(Duration within) {
        return new IOException("the answer did not arrive whole within "
                + (within.toMillis() % 1000 == 0 ? within.toSeconds() + " s" : within.toMillis() + " ms"));
    }

    private static void join(Thread timer) {
        boolean interrupted = false;
        while (true) {
            try {
                timer.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
