package dev.drover.execstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ExecSessionTest {

    /** A peer that keeps what it is sent. */
    static final class RecordingPeer implements ExecSession.Peer {
        final BlockingQueue<ByteBuffer> messages = new LinkedBlockingQueue<>();
        final CountDownLatch closed = new CountDownLatch(1);
        volatile String error;

        @Override
        public void send(ByteBuffer message) {
            messages.add(message);
        }

        @Override
        public void close(String error) {
            this.error = error;
            closed.countDown();
        }

        /** The messages until the session closes: channel number, then the payload as text. */
        List<String> transcript() throws InterruptedException {
            assertThat(closed.await(10, TimeUnit.SECONDS))
                    .as("the session ends")
                    .isTrue();
            List<String> out = new ArrayList<>();
            for (ByteBuffer m : messages) {
                int channel = Byte.toUnsignedInt(m.get(0));
                out.add(channel + ":" + ExecStatus.text(m.slice(1, m.remaining() - 1)));
            }
            return out;
        }
    }

    private static ByteBuffer stdin(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return Channels.message(Channels.STDIN, bytes, 0, bytes.length);
    }

    private static final Runnable NOTHING = () -> {};

    @Test
    void catRoundTripsInputAndEndsWithSuccess() throws Exception {
        FakeExecProcess cat = FakeExecProcess.cat();
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(cat, new ExecSession.Streams(true, true, true, true), peer)) {
            session.start();
            session.receive(stdin("hello "), NOTHING);
            session.receive(stdin("world"), NOTHING);
            session.receive(Channels.close(Channels.STDIN), NOTHING);

            List<String> transcript = peer.transcript();
            assertThat(String.join(
                            "",
                            transcript.stream()
                                    .filter(m -> m.startsWith("1:"))
                                    .map(m -> m.substring(2))
                                    .toList()))
                    .isEqualTo("hello world");
            assertThat(transcript.getLast()).isEqualTo("3:{\"metadata\":{},\"status\":\"Success\"}");
            assertThat(transcript).contains("255:\u0001", "255:\u0002");
            assertThat(peer.error).isNull();
            assertThat(cat.killed()).isFalse();
        }
    }

    @Test
    void nonZeroExitGoesOutAsItsCode() throws Exception {
        FakeExecProcess failing = FakeExecProcess.failing("no such file\n", 3);
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(failing, new ExecSession.Streams(false, true, true, true), peer)) {
            session.start();
            List<String> transcript = peer.transcript();
            assertThat(transcript).contains("2:no such file\n");
            assertThat(transcript.getLast())
                    .isEqualTo("3:{\"metadata\":{},\"status\":\"Failure\","
                            + "\"message\":\"command terminated with non-zero exit code: 3\","
                            + "\"reason\":\"NonZeroExitCode\","
                            + "\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\"3\"}]}}");
            ByteBuffer last = new ArrayList<>(peer.messages).getLast();
            assertThat(ExecStatus.read(last.slice(1, last.remaining() - 1)).code())
                    .isEqualTo(3);
        }
    }

    @Test
    void version4SendsNoChannelCloses() throws Exception {
        FakeExecProcess failing = FakeExecProcess.failing("x", 0);
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(failing, new ExecSession.Streams(false, true, true, false), peer)) {
            session.start();
            assertThat(peer.transcript()).containsExactly("2:x", "3:{\"metadata\":{},\"status\":\"Success\"}");
        }
    }

    @Test
    void streamsTheCallerDidNotAskForAreDrainedNotSent() throws Exception {
        FakeExecProcess failing = FakeExecProcess.failing("hidden", 0);
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(failing, new ExecSession.Streams(false, true, false, true), peer)) {
            session.start();
            assertThat(peer.transcript()).containsExactly("255:\u0001", "3:{\"metadata\":{},\"status\":\"Success\"}");
        }
    }

    @Test
    void resizesReachTheTerminalAndNonsenseIsIgnored() throws Exception {
        FakeExecProcess cat = FakeExecProcess.cat();
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(cat, new ExecSession.Streams(true, true, true, true), peer)) {
            session.start();
            byte[] size = "{\"Width\":120,\"Height\":40}".getBytes(StandardCharsets.UTF_8);
            byte[] huge = "{\"Width\":120000,\"Height\":40}".getBytes(StandardCharsets.UTF_8);
            byte[] junk = "[1,2]".getBytes(StandardCharsets.UTF_8);
            session.receive(Channels.message(Channels.RESIZE, size, 0, size.length), NOTHING);
            session.receive(Channels.message(Channels.RESIZE, huge, 0, huge.length), NOTHING);
            session.receive(Channels.message(Channels.RESIZE, junk, 0, junk.length), NOTHING);
            assertThat(cat.resizes()).containsExactly("120x40");
            assertThat(session.ended()).isFalse();
        }
    }

    @Test
    void aPeerThatGoesAwayKillsTheCommand() throws Exception {
        FakeExecProcess cat = FakeExecProcess.cat();
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(cat, new ExecSession.Streams(true, true, true, true), peer)) {
            session.start();
            session.receive(stdin("a"), NOTHING);
            session.peerGone();
            await().atMost(Duration.ofSeconds(5)).until(() -> cat.exit().isDone());
            assertThat(cat.killed()).isTrue();
            assertThat(peer.closed.getCount())
                    .as("nothing is sent to a peer that is gone")
                    .isEqualTo(1);
        }
    }

    @Test
    void anOversizedMessageEndsTheSessionAndKillsTheCommand() throws Exception {
        FakeExecProcess cat = FakeExecProcess.cat();
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(cat, new ExecSession.Streams(true, true, true, true), peer)) {
            session.start();
            AtomicInteger done = new AtomicInteger();
            session.receive(
                    Channels.message(Channels.STDIN, new byte[Channels.MAX_MESSAGE], 0, Channels.MAX_MESSAGE),
                    done::incrementAndGet);
            assertThat(peer.closed.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(peer.error).contains("larger than " + Channels.MAX_MESSAGE);
            assertThat(cat.killed()).isTrue();
            assertThat(done).hasValue(1);
        }
    }

    @Test
    void aMessageOnAServerChannelEndsTheSession() throws Exception {
        FakeExecProcess cat = FakeExecProcess.cat();
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(cat, new ExecSession.Streams(true, true, true, true), peer)) {
            session.start();
            session.receive(Channels.message(Channels.ERROR, new byte[1], 0, 1), NOTHING);
            assertThat(peer.closed.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(peer.error).contains("channel 3");
            assertThat(cat.killed()).isTrue();
        }
    }

    @Test
    void outputGoesOutInBoundedMessages() throws Exception {
        FakeExecProcess p = new FakeExecProcess();
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(p, new ExecSession.Streams(false, true, true, true), peer)) {
            session.start();
            byte[] big = new byte[3 * Channels.CHUNK + 7];
            java.util.Arrays.fill(big, (byte) 'x');
            try (OutputStream out = p.commandOutput();
                    OutputStream err = p.commandErrors()) {
                out.write(big);
            }
            p.exitWith(0);
            peer.transcript();
            long stdout = 0;
            for (ByteBuffer m : peer.messages) {
                assertThat(m.remaining()).isLessThanOrEqualTo(1 + Channels.CHUNK);
                if (m.get(0) == Channels.STDOUT) {
                    stdout += m.remaining() - 1;
                }
            }
            assertThat(stdout).isEqualTo(big.length);
        }
    }

    @Test
    void theNextInputIsReadOnlyWhenTheLastIsWritten() throws Exception {
        FakeExecProcess p = new FakeExecProcess(); // never reads its input
        RecordingPeer peer = new RecordingPeer();
        try (ExecSession session = new ExecSession(p, new ExecSession.Streams(true, true, true, true), peer)) {
            session.start();
            CountDownLatch written = new CountDownLatch(3);
            byte[] chunk = new byte[Channels.MAX_MESSAGE - 1];
            for (int i = 0; i < 3; i++) {
                session.receive(Channels.message(Channels.STDIN, chunk, 0, chunk.length), written::countDown);
            }
            // a pipe holds 64 KiB: the command reads nothing, so the later inputs wait for it
            assertThat(written.await(300, TimeUnit.MILLISECONDS)).isFalse();
            p.commandInput().readNBytes(3 * chunk.length);
            assertThat(written.await(5, TimeUnit.SECONDS)).isTrue();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aStatusThatIsNotAnExitSaysItsMessage() {
        String failed = ExecStatus.failed("the task stopped");
        ExecStatus.Outcome outcome = ExecStatus.read(ByteBuffer.wrap(failed.getBytes(StandardCharsets.UTF_8)));
        assertThat(outcome.code()).isEqualTo(1);
        assertThat(outcome.message()).isEqualTo("the task stopped");
        assertThat(ExecStatus.read(ByteBuffer.wrap("nope".getBytes(StandardCharsets.UTF_8)))
                        .code())
                .isEqualTo(1);
    }
}
