package dev.drover.controller.previous;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PeerTokenTest {

    @TempDir
    Path dir;

    @Test
    void aProjectedTokenIsReadThroughTheKubeletsLinksAndAgainAfterRotation() throws Exception {
        Path data = Files.createDirectory(dir.resolve("..2026_11_25"));
        Files.writeString(data.resolve("token"), "first.token.value\n");
        Files.createSymbolicLink(dir.resolve("..data"), data.getFileName());
        Files.createSymbolicLink(dir.resolve("token"), Path.of("..data/token"));
        PeerToken token = new PeerToken(dir.resolve("token"));
        assertThat(token.read()).isEqualTo("first.token.value");

        Files.writeString(data.resolve("token"), "second.token.value");
        assertThat(token.read()).as("read at each use").isEqualTo("second.token.value");
    }

    @Test
    void aMissingFileSaysWhatShouldBeThere() {
        assertThatThrownBy(() -> new PeerToken(dir.resolve("absent")).read())
                .isInstanceOf(IOException.class)
                .hasMessageContaining("this agent has no peer token: " + dir.resolve("absent") + " does not exist")
                .hasMessageContaining("audience drover.dev/agent")
                .hasMessageContaining("--peer-token-file");
    }

    @Test
    void aHugeFileADirectoryOrGarbageIsNotSent() throws Exception {
        Path huge = dir.resolve("huge");
        Files.write(huge, new byte[PeerToken.MAX_BYTES + 1]);
        assertThatThrownBy(() -> new PeerToken(huge).read()).hasMessageContaining("more than 65536 bytes");

        assertThatThrownBy(() -> new PeerToken(dir).read()).hasMessageContaining("is not a regular file");

        Path empty = Files.writeString(dir.resolve("empty"), " \n");
        assertThatThrownBy(() -> new PeerToken(empty).read()).hasMessageEndingWith("is empty");

        Path header = Files.writeString(dir.resolve("header"), "token\r\nX-Injected: 1");
        assertThatThrownBy(() -> new PeerToken(header).read()).hasMessageContaining("holds no token");
    }
}
