package dev.drover.controller.previous;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The token this agent shows other nodes' agents: a ServiceAccount token with audience {@code drover.dev/agent},
 * bound to this agent's pod (and so naming its node), which the chart's DaemonSet projects into a file. The file is
 * read at each use because the kubelet rotates it. It lives in a volume the kubelet writes through its own links
 * ({@code token -> ..data/token}), so those are followed; what they lead to must be a regular file of at most
 * {@link #MAX_BYTES}.
 */
public final class PeerToken {

    /** Far above a real token (about 1 KB), far below what would hurt to hold. */
    public static final int MAX_BYTES = 64 * 1024;

    private final Path file;

    public PeerToken(Path file) {
        this.file = file;
    }

    public Path file() {
        return file;
    }

    /** The token now in the file; an IOException that says what is wrong with the file and how to fix it. */
    public String read() throws IOException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            throw new IOException("this agent has no peer token: " + file + " does not exist; it must hold a"
                    + " ServiceAccount token with audience drover.dev/agent (the chart's DaemonSet projects one there;"
                    + " elsewhere set peerTokenFile, --peer-token-file or DROVER_PEER_TOKEN_FILE)");
        }
        if (!attributes.isRegularFile()) {
            throw new IOException("the peer token file " + file + " is not a regular file");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        if (bytes.length > MAX_BYTES) {
            throw new IOException("the peer token file " + file + " holds more than " + MAX_BYTES
                    + " bytes; a ServiceAccount token is about 1 KB");
        }
        String token = new String(bytes, StandardCharsets.UTF_8).trim();
        if (token.isEmpty() || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new IOException("the peer token file " + file
                    + (token.isEmpty()
                            ? " is empty"
                            : " holds no token" + " (a token is one word of printable ASCII)"));
        }
        return token;
    }
}
