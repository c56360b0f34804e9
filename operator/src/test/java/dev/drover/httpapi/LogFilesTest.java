package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogFilesTest {

    @TempDir
    Path logs;

    String tail(int lines) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new LogFiles(logs, "web", "stdout").tail(lines, out);
        return out.toString(StandardCharsets.UTF_8);
    }

    void write(String file, String content) throws Exception {
        Files.writeString(logs.resolve(file), content);
    }

    @Test
    void rotatedFilesReadAsOneStreamOldestFirst() throws Exception {
        write("web.stdout.2", "l1\nl2\n");
        write("web.stdout.1", "l3\nl4\n");
        write("web.stdout.0", "l5\nl6");
        write("web.stderr.0", "not this stream\n");
        assertThat(tail(-1)).isEqualTo("l1\nl2\nl3\nl4\nl5\nl6");
        assertThat(tail(3)).as("the last line need not be finished").isEqualTo("l4\nl5\nl6");
        assertThat(tail(100)).isEqualTo("l1\nl2\nl3\nl4\nl5\nl6");
        assertThat(tail(0)).isEmpty();
        write("web.stdout.0", "l5\nl6\n");
        assertThat(tail(1)).isEqualTo("l6\n");
        assertThat(tail(2)).isEqualTo("l5\nl6\n");
        assertThat(tail(4)).as("across files").isEqualTo("l3\nl4\nl5\nl6\n");
    }

    @Test
    void aTaskThatWroteNothingYetHasEmptyLogs() throws Exception {
        assertThat(tail(10)).isEmpty();
    }

    @Test
    void followingCarriesOnThroughARotationWithoutLosingOrRepeatingAByte() throws Exception {
        Path current = logs.resolve("web.stdout.0");
        write("web.stdout.0", "before\n");
        LogFiles files = new LogFiles(logs, "web", "stdout");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OutputStream synced = new OutputStream() {
            @Override
            public synchronized void write(int b) {
                out.write(b);
            }

            @Override
            public synchronized void write(byte[] b, int off, int len) {
                out.write(b, off, len);
            }
        };
        long position = files.tail(-1, synced);
        AtomicBoolean stop = new AtomicBoolean();
        Thread follower = Thread.ofVirtual().start(() -> {
            try {
                files.follow(position, synced, stop::get, Duration.ofMillis(10));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Files.writeString(current, "one\n", StandardOpenOption.APPEND);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> out.toString(StandardCharsets.UTF_8).endsWith("one\n"));
        follower.join(50); // let it poll past "one"
        // What the rotator does: copy .0 to .1, truncate .0, the task writes on.
        Files.writeString(current, "two\n", StandardOpenOption.APPEND);
        Files.copy(current, logs.resolve("web.stdout.1"), StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel ch = FileChannel.open(current, StandardOpenOption.WRITE)) {
            ch.truncate(0);
        }
        Files.writeString(current, "three\n", StandardOpenOption.APPEND);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> out.toString(StandardCharsets.UTF_8).contains("three\n"));
        stop.set(true);
        follower.join(5_000);
        assertThat(follower.isAlive()).isFalse();
        assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("before\none\ntwo\nthree\n");
    }

    @Test
    void namesThatCouldEscapeTheLogsDirectoryAreRefused() {
        assertThatThrownBy(() -> new LogFiles(logs, "../web", "stdout")).hasMessageContaining("not a task name");
        assertThatThrownBy(() -> new LogFiles(logs, "web", "../../etc/passwd"))
                .hasMessageContaining("stdout or stderr");
    }
}
