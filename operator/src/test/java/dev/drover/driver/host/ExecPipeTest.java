package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A command's pipes, read and written through the same non-blocking stream as a terminal's master. */
class ExecPipeTest {

    @Test
    void theOutputEndsOnceTheCommandClosedItAndAllWasReadAndStaysEnded() throws Exception {
        try (ExecPipe out = ExecPipe.fromCommand()) {
            Process echo = new ProcessBuilder("/bin/sh", "-c", "echo hi")
                    .redirectOutput(out.redirect())
                    .start();
            out.started();
            InputStream in = out.input();

            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("hi\n");
            assertThat(in.read()).as("still the end").isEqualTo(-1);
            assertThat(echo.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aReadWaitingOnAPipeHeldOpenEndsWhenItIsClosedFromAnotherThread() throws Exception {
        ExecPipe out = ExecPipe.fromCommand(); // the command's end stays held: no end of its own
        CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> {
            try {
                return out.input().read();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(ExecPipe.MAX_WAIT_MILLIS); // the read is waiting

        out.close();

        assertThat(read.get(5, TimeUnit.SECONDS)).isEqualTo(-1);
    }

    @Test
    void closingTheInputEndsWhatTheCommandReadsAndLaterWritesFail() throws Exception {
        try (ExecPipe in = ExecPipe.toCommand();
                ExecPipe out = ExecPipe.fromCommand()) {
            Process cat = new ProcessBuilder("cat")
                    .redirectInput(in.redirect())
                    .redirectOutput(out.redirect())
                    .start();
            in.started();
            out.started();

            var stdin = in.output();
            stdin.write("typed".getBytes(StandardCharsets.UTF_8));
            stdin.close();

            assertThat(new String(out.input().readAllBytes(), StandardCharsets.UTF_8))
                    .isEqualTo("typed");
            assertThat(cat.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThatThrownBy(() -> stdin.write(1))
                    .isInstanceOf(IOException.class)
                    .hasMessage("the command's pipe is closed");
        }
    }
}
