package dev.drover.execstream;

import dev.drover.driver.ExecProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running command joined to a WebSocket peer by the channel protocol ({@link Channels}): what the peer sends on
 * stdin goes to the command, one message at a time (the peer's next message is read only when the last one is
 * written, so a command that does not read holds the peer back rather than the agent's memory); resizes set the
 * terminal; version 5's close of stdin ends the command's input. The command's output goes out in messages of at most
 * {@link Channels#CHUNK} bytes, each sent before the next is read; when the command has exited and its output ended,
 * its status goes out on {@link Channels#ERROR} and the session ends. A peer that goes away kills the command.
 */
public final class ExecSession implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ExecSession.class);
    /** How long output may go on after the command exited (something it started still writes) before it is cut. */
    static final Duration OUTPUT_GRACE = Duration.ofSeconds(2);

    private static final byte[] END = new byte[0];

    /** Where the session's messages go: the WebSocket of the peer. */
    public interface Peer {
        /** Sends one binary message, returning once it is sent (or failing when the peer is gone). */
        void send(ByteBuffer message) throws IOException;

        /** Ends the WebSocket normally, or with {@code error} (not null) when the session broke. */
        void close(String error);
    }

    /** What the peer asked for: which streams it reads, and whether it speaks version 5. */
    public record Streams(boolean stdin, boolean stdout, boolean stderr, boolean v5) {}

    private final ExecProcess process;
    private final Streams streams;
    private final Peer peer;
    private final BlockingQueue<Input> input = new ArrayBlockingQueue<>(4);
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean ended;

    private record Input(byte[] bytes, Runnable done) {}

    public ExecSession(ExecProcess process, Streams streams, Peer peer) {
        this.process = process;
        this.streams = streams;
        this.peer = peer;
    }

    /** Starts moving bytes: output to the peer, input to the command, and the status at the end. */
    public synchronized void start() {
        Thread stdout = thread("stdout", () -> pump(process.stdout(), Channels.STDOUT, streams.stdout()));
        Thread stderr = thread("stderr", () -> pump(process.stderr(), Channels.STDERR, streams.stderr()));
        thread("stdin", this::writeInput);
        thread("status", () -> finish(stdout, stderr));
    }

    private Thread thread(String what, Runnable body) {
        Thread t = Thread.ofVirtual().name("exec-" + what).start(body);
        threads.add(t);
        return t;
    }

    /**
     * One message from the peer; {@code done} runs once it is dealt with, and the peer's next message is read only
     * then. A message that breaks the protocol ends the session.
     */
    public void receive(ByteBuffer message, Runnable done) {
        Channels.Message read;
        try {
            read = Channels.read(message);
        } catch (Channels.ProtocolException e) {
            done.run();
            fail(e.getMessage());
            return;
        }
        switch (read.channel()) {
            case Channels.STDIN -> {
                if (!streams.stdin() || ended) {
                    done.run();
                } else if (!input.offer(new Input(ExecStatus.bytes(read.payload()), done))) {
                    done.run();
                    fail("the peer sent input before its last input was written");
                }
            }
            case Channels.RESIZE -> {
                try {
                    Channels.Size size = Channels.Size.parse(read.payload());
                    process.resize(size.columns(), size.rows());
                } catch (Channels.ProtocolException | IOException e) {
                    LOG.debug("resize refused: {}", e.getMessage());
                }
                done.run();
            }
            case Channels.CLOSE -> {
                if (read.payload().remaining() == 1 && read.payload().get(0) == Channels.STDIN && streams.stdin()) {
                    if (!input.offer(new Input(END, done))) {
                        done.run();
                        fail("the peer closed its input before its last input was written");
                    }
                } else {
                    done.run();
                }
            }
            default -> {
                done.run();
                fail("a client does not send on channel " + read.channel());
            }
        }
    }

    /** The peer went away (or broke the connection): the command is killed and nothing more is sent. */
    public void peerGone() {
        ended = true;
        process.close();
        releaseInput();
    }

    private void writeInput() {
        OutputStream stdin = process.stdin();
        boolean open = streams.stdin();
        try {
            while (true) {
                Input next = input.take();
                try {
                    if (next.bytes() == END) {
                        closeQuietly(stdin);
                        open = false;
                    } else if (open) {
                        stdin.write(next.bytes());
                        stdin.flush();
                    }
                } catch (IOException e) {
                    // the command closed its input or exited: what the peer sends next is dropped
                    LOG.debug("input for an exec dropped: {}", e.toString());
                    open = false;
                } finally {
                    next.done().run();
                }
            }
        } catch (InterruptedException e) {
            // the session ends
        } finally {
            closeQuietly(stdin);
            releaseInput();
        }
    }

    private void releaseInput() {
        for (Input left; (left = input.poll()) != null; ) {
            left.done().run();
        }
    }

    private void pump(InputStream from, int channel, boolean wanted) {
        byte[] buffer = new byte[Channels.CHUNK];
        try (from) {
            for (int n; (n = from.read(buffer)) >= 0; ) {
                if (n > 0 && wanted && !ended) {
                    peer.send(Channels.message(channel, buffer, 0, n));
                }
            }
            if (wanted && streams.v5() && !ended) {
                peer.send(Channels.close(channel));
            }
        } catch (IOException e) {
            if (!ended) {
                LOG.debug("channel {} of an exec ended: {}", channel, e.toString());
                peerGone();
            }
        }
    }

    private void finish(Thread stdout, Thread stderr) {
        String status;
        try {
            int code = process.exit().get();
            if (!stdout.join(OUTPUT_GRACE) || !stderr.join(OUTPUT_GRACE)) {
                // what the command left behind still holds its output open: it ends with the command
                process.close();
                stdout.join();
                stderr.join();
            }
            status = ExecStatus.exited(code);
        } catch (ExecutionException e) {
            status = ExecStatus.failed(
                    "the command's end is unknown: " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            return;
        }
        if (ended) {
            return;
        }
        try {
            byte[] bytes = status.getBytes(StandardCharsets.UTF_8);
            peer.send(Channels.message(Channels.ERROR, bytes, 0, bytes.length));
            ended = true;
            peer.close(null);
        } catch (IOException e) {
            LOG.debug("the status of an exec was not delivered: {}", e.toString());
            peerGone();
        }
    }

    private void fail(String why) {
        if (ended) {
            return;
        }
        LOG.info("exec session ended: {}", why);
        peerGone();
        peer.close(why);
    }

    /** Whether the session has ended: status sent, peer gone or protocol broken. */
    public boolean ended() {
        return ended;
    }

    /** Ends the session: the command is killed if it still runs, and the session's threads are joined. */
    @Override
    public void close() {
        peerGone();
        List<Thread> all;
        synchronized (this) {
            all = List.copyOf(threads);
        }
        for (Thread t : all) {
            t.interrupt();
        }
        for (Thread t : all) {
            try {
                if (!t.join(Duration.ofSeconds(5))) {
                    LOG.warn("exec thread {} did not end", t.getName());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void closeQuietly(OutputStream out) {
        try {
            out.close();
        } catch (IOException e) {
            LOG.debug("closing an exec's input: {}", e.toString());
        }
    }
}
