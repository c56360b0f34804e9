package dev.drover.execstream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.web.MessageReceiver;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A client's side of an exec for tests: keeps every message until the socket closes. */
public final class ExecTranscript implements MessageReceiver {

    public final BlockingQueue<ByteBuffer> messages = new LinkedBlockingQueue<>();
    public final CountDownLatch closed = new CountDownLatch(1);
    public volatile String why;

    @Override
    public void opened(ExecSession.Peer peer) {}

    @Override
    public void message(ByteBuffer message, Runnable done) {
        messages.add(message);
        done.run();
    }

    @Override
    public void closed(String why) {
        this.why = why;
        closed.countDown();
    }

    /** Waits for the end; then what came on {@code channel}, as text. */
    public String channel(int channel) throws InterruptedException {
        assertThat(closed.await(20, TimeUnit.SECONDS)).as("the exec ends").isTrue();
        StringBuilder out = new StringBuilder();
        for (ByteBuffer m : messages) {
            if (Byte.toUnsignedInt(m.get(0)) == channel) {
                out.append(ExecStatus.text(m.slice(1, m.remaining() - 1)));
            }
        }
        return out.toString();
    }

    /** Waits for the end; then the outcome the status on the error channel says. */
    public ExecStatus.Outcome outcome() throws InterruptedException {
        return ExecStatus.read(ByteBuffer.wrap(channel(Channels.ERROR).getBytes(StandardCharsets.UTF_8)));
    }

    public static ByteBuffer stdin(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return Channels.message(Channels.STDIN, bytes, 0, bytes.length);
    }

    public List<ByteBuffer> all() {
        return new ArrayList<>(messages);
    }
}
