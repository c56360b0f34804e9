package dev.drover.cli.kube;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Keys and certificates made by openssl, as kubeadm, k3s and friends leave them in kubeconfigs: a CA, a server
 * certificate for 127.0.0.1 and {@code api.example}, a client certificate (CN {@code alice}), keys in each PEM form.
 */
public final class Openssl {

    private final Path dir;

    public Openssl(Path dir) {
        this.dir = dir;
    }

    Path path(String name) {
        return dir.resolve(name);
    }

    public byte[] bytes(String name) throws IOException {
        return Files.readAllBytes(dir.resolve(name));
    }

    /** Runs openssl in the directory; fails the test with its output when it fails. */
    public void run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("openssl " + String.join(" ", args) + ": " + output);
        }
    }

    /**
     * ca.crt/ca.key, server.crt/server.key (EC, SEC1), named.crt (server.key's, for api.example only),
     * client.crt/client.key (RSA, PKCS#1).
     */
    public Openssl pki() throws IOException, InterruptedException {
        run(
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-subj",
                "/CN=test-ca",
                "-days",
                "2");
        run("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "server.key");
        run("req", "-new", "-key", "server.key", "-out", "server.csr", "-subj", "/CN=server");
        Files.writeString(dir.resolve("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:api.example\n");
        run(
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "server.crt",
                "-days",
                "2",
                "-extfile",
                "server.ext");
        // the same key, signed by the same CA, for a name only: not for 127.0.0.1
        Files.writeString(dir.resolve("named.ext"), "subjectAltName=DNS:api.example\n");
        run(
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "named.crt",
                "-days",
                "2",
                "-extfile",
                "named.ext");
        run("genrsa", "-traditional", "-out", "client.key", "2048");
        run("req", "-new", "-key", "client.key", "-out", "client.csr", "-subj", "/CN=alice");
        run(
                "x509",
                "-req",
                "-in",
                "client.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "client.crt",
                "-days",
                "2");
        return this;
    }
}
