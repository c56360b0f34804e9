package dev.drover.local;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** Writes a kubeconfig that plain kubectl uses with no extra flags. */
final class Kubeconfig {

    static final String NAME = "drover-local";

    private Kubeconfig() {}

    static void write(Path file, URI server) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        String yaml = """
                apiVersion: v1
                kind: Config
                clusters:
                - name: %1$s
                  cluster:
                    server: %2$s
                users:
                - name: %1$s
                  user:
                    token: %1$s
                contexts:
                - name: %1$s
                  context:
                    cluster: %1$s
                    user: %1$s
                    namespace: default
                current-context: %1$s
                """.formatted(NAME, server);
        Path tmp = Files.createTempFile(parent, ".kubeconfig", ".tmp");
        Files.writeString(tmp, yaml);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
