package dev.drover.local;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Base64;

/** Writes a kubeconfig that plain kubectl uses with no extra flags: the server, the certificate to trust, a token. */
final class Kubeconfig {

    static final String NAME = "drover-local";

    private Kubeconfig() {}

    /** The administrator's kubeconfig: user {@value #NAME} with the token {@value #NAME}. */
    static void write(Path file, URI server, String certificatePem) throws IOException {
        write(file, server, certificatePem, NAME, NAME);
    }

    /**
     * A kubeconfig for {@code user} holding {@code token}, readable by its owner only and replaced atomically (a
     * client reading it again finds the old or the new one, whole).
     */
    static void write(Path file, URI server, String certificatePem, String user, String token) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        String yaml = """
                apiVersion: v1
                kind: Config
                clusters:
                - name: %1$s
                  cluster:
                    server: %2$s
                    certificate-authority-data: %5$s
                users:
                - name: %3$s
                  user:
                    token: %4$s
                contexts:
                - name: %1$s
                  context:
                    cluster: %1$s
                    user: %3$s
                    namespace: default
                current-context: %1$s
                """.formatted(
                        NAME,
                        server,
                        quoted(user),
                        quoted(token),
                        Base64.getEncoder().encodeToString(certificatePem.getBytes(StandardCharsets.US_ASCII)));
        Path tmp = Files.createTempFile(
                parent,
                ".kubeconfig",
                ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(tmp, yaml);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** A YAML double-quoted scalar: user names hold colons. */
    private static String quoted(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
