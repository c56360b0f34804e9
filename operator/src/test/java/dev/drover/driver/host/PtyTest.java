package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The pseudo-terminal itself, without a command on it. */
class PtyTest {

    @BeforeEach
    void ptysExist() {
        assumeTrue(Files.exists(Path.of("/dev/ptmx")), "no /dev/ptmx");
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    @Test
    void everyDescriptorIsClosedWhateverWasDoneWithTheTerminal() throws Exception {
        long before = openDescriptors();
        for (int i = 0; i < 20; i++) {
            try (Pty pty = Pty.open()) {
                assertThat(pty.slave().toString()).matches("/dev/pts/[0-9]+");
                assertThat(pty.slave()).exists();
                if (i % 2 == 0) {
                    pty.commandEnded();
                }
                pty.resize(Integer.MAX_VALUE, -5); // cut to what the kernel holds, not an error
            }
        }
        assertThat(openDescriptors()).isEqualTo(before);
    }

    @Test
    void aReadWaitingForOutputEndsWhenTheTerminalIsClosedFromAnotherThread() throws Exception {
        Pty pty = Pty.open();
        CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> {
            try {
                return pty.output().read();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(Pty.POLL_MILLIS); // the read is waiting: nothing was written on the terminal

        pty.close();

        assertThat(read.get(5, TimeUnit.SECONDS)).isEqualTo(-1);
        assertThatThrownBy(() -> pty.input().write(1)).isInstanceOf(IOException.class);
        assertThatThrownBy(() -> pty.resize(80, 24)).isInstanceOf(IOException.class);
        pty.close(); // twice is once
    }

    @Test
    void readsWaitingForOutputHoldNoCarrierSoOtherVirtualThreadsRunOn() throws Exception {
        List<Pty> ptys = new ArrayList<>();
        List<Thread> readers = new ArrayList<>();
        try {
            for (int i = 0; i < 4 * Runtime.getRuntime().availableProcessors(); i++) {
                Pty pty = Pty.open();
                ptys.add(pty);
                readers.add(Thread.ofVirtual().start(() -> {
                    try {
                        pty.output().read(); // nothing is ever written: waits until closed
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            Thread.sleep(Pty.POLL_MILLIS * 2L); // all are waiting

            long begun = System.nanoTime();
            Thread other = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 50; i++) {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });

            assertThat(other.join(Duration.ofSeconds(5))).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - begun))
                    .as("50 naps of 1 ms beside the waiting reads")
                    .isLessThan(Duration.ofMillis(1000));
        } finally {
            ptys.forEach(Pty::close);
            for (Thread reader : readers) {
                assertThat(reader.join(Duration.ofSeconds(5))).isTrue();
            }
        }
    }

    @Test
    void whatIsTypedIsEchoedBackByTheTerminalItself() throws Exception {
        try (Pty pty = Pty.open()) {
            pty.input().write("hi\n".getBytes());
            assertThat(new String(pty.output().readNBytes(4))).isEqualTo("hi\r\n");
            pty.commandEnded();
            assertThat(pty.output().read())
                    .as("no slave open any more: the end")
                    .isEqualTo(-1);
        }
    }

    @Test
    void aRelayedTerminalsEndOfInputIsTypedOnceTheRelaySetItRawSoThatItPassesOn() throws Exception {
        try (Pty pty = Pty.forRelay()) {
            pty.input().close(); // before the relay set it raw: typed in line mode it would end the relay's reading
            assertThatThrownBy(() -> pty.input().write(1)).isInstanceOf(IOException.class);

            Process relay = new ProcessBuilder("sh", "-c", "stty raw -echo && od -An -tx1 -N1")
                    .redirectInput(ProcessBuilder.Redirect.from(pty.slave().toFile()))
                    .start();

            assertThat(new String(relay.getInputStream().readAllBytes()).trim())
                    .as("Ctrl-D, as a byte")
                    .isEqualTo("04");
            assertThat(relay.waitFor(5, TimeUnit.SECONDS)).isTrue();
        }
    }
}
