package dev.drover.cli.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a kubeconfig's {@code exec} credential plugin as kubectl does: the command with its args, the kubeconfig's
 * env added to ours and {@code KUBERNETES_EXEC_INFO} (an ExecCredential, not interactive), no input; its output is
 * an ExecCredential whose status holds a token or a client certificate and key. A plugin is a program from the
 * kubeconfig: its output is bounded, it has a deadline, and what it says on failure is cut and escaped.
 */
public final class ExecPlugin {

    public static final String V1 = "client.authentication.k8s.io/v1";
    public static final String V1BETA1 = "client.authentication.k8s.io/v1beta1";

    /** An ExecCredential is a token or a certificate: a few KiB. */
    static final int MAX_OUTPUT = 1 << 20;

    static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final int MAX_ERROR = 16 << 10;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the plugin gave: a token, or a client certificate and key (PEM); the others null. */
    public record Credential(String token, byte[] clientCertPem, byte[] clientKeyPem) {}

    private ExecPlugin() {}

    public static Credential run(ExecConfig exec) throws KubeconfigException {
        return run(exec, DEADLINE);
    }

    static Credential run(ExecConfig exec, Duration deadline) throws KubeconfigException {
        List<String> command = new ArrayList<>();
        command.add(exec.command());
        command.addAll(exec.args());
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.PIPE);
        builder.environment().putAll(exec.env());
        builder.environment().put("KUBERNETES_EXEC_INFO", info(exec));
        String what = "the exec plugin " + UserText.quote(exec.command());
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new KubeconfigException("cannot run " + what + " (" + UserText.cutEscaped(e.getMessage(), 200) + ")"
                    + (exec.installHint() == null ? "" : ": " + UserText.cutEscaped(exec.installHint(), 400)));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        boolean[] tooMuch = {false};
        Thread readOut = Thread.ofVirtual().name("exec-plugin-out").start(() -> {
            tooMuch[0] = !drain(process.getInputStream(), out, MAX_OUTPUT, false);
            if (tooMuch[0]) {
                process.destroyForcibly();
            }
        });
        Thread readErr = Thread.ofVirtual()
                .name("exec-plugin-err")
                .start(() -> drain(process.getErrorStream(), err, MAX_ERROR, true));
        try {
            process.getOutputStream().close();
            boolean ended = process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS);
            if (!ended) {
                end(process);
            }
            // a child the plugin left behind may hold its output open: closing our ends stops the readers
            if (!readOut.join(Duration.ofSeconds(1)) || !readErr.join(Duration.ofSeconds(1))) {
                process.getInputStream().close();
                process.getErrorStream().close();
                readOut.join();
                readErr.join();
            }
            if (!ended) {
                throw new KubeconfigException(what + " did not finish within "
                        + (deadline.toMillis() % 1000 == 0
                                ? deadline.toSeconds() + " s"
                                : deadline.toMillis() + " ms"));
            }
        } catch (InterruptedException e) {
            end(process);
            Thread.currentThread().interrupt();
            throw new KubeconfigException("interrupted while " + what + " ran");
        } catch (IOException e) {
            throw new KubeconfigException("reading what " + what + " printed: " + e.getMessage());
        }
        if (tooMuch[0]) {
            throw new KubeconfigException(what + " printed more than " + (MAX_OUTPUT >> 20) + " MiB");
        }
        if (process.exitValue() != 0) {
            String said = err.toString(StandardCharsets.UTF_8).strip();
            throw new KubeconfigException(what + " failed (exit code " + process.exitValue() + ")"
                    + (said.isEmpty() ? "" : ": " + UserText.cutEscaped(said, 400)));
        }
        return credential(out.toByteArray(), exec.apiVersion(), what);
    }

    static Credential credential(byte[] output, String apiVersion, String what) throws KubeconfigException {
        JsonNode answer;
        try {
            answer = JSON.readTree(output);
        } catch (IOException e) {
            throw new KubeconfigException(what + " printed no ExecCredential (not JSON)");
        }
        if (answer == null || !answer.path("kind").asText("").equals("ExecCredential")) {
            throw new KubeconfigException(what + " printed no ExecCredential");
        }
        if (!answer.path("apiVersion").asText("").equals(apiVersion)) {
            throw new KubeconfigException(what + " answered in "
                    + UserText.quote(answer.path("apiVersion").asText("")) + ", not the " + apiVersion
                    + " the kubeconfig asks for");
        }
        JsonNode status = answer.path("status");
        String token = status.path("token").asText("");
        String cert = status.path("clientCertificateData").asText("");
        String key = status.path("clientKeyData").asText("");
        if (!token.isEmpty()) {
            return new Credential(token, null, null);
        }
        if (!cert.isEmpty() && !key.isEmpty()) {
            return new Credential(
                    null, cert.getBytes(StandardCharsets.US_ASCII), key.getBytes(StandardCharsets.US_ASCII));
        }
        throw new KubeconfigException(
                what + "'s ExecCredential has neither status.token nor status.clientCertificateData and clientKeyData");
    }

    /** {@code KUBERNETES_EXEC_INFO}: the ExecCredential the plugin is asked to complete. */
    static String info(ExecConfig exec) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("interactive", false);
        if (exec.clusterInfo() != null) {
            spec.put("cluster", exec.clusterInfo());
        }
        Map<String, Object> credential = new LinkedHashMap<>();
        credential.put("apiVersion", exec.apiVersion());
        credential.put("kind", "ExecCredential");
        credential.put("spec", spec);
        try {
            return JSON.writeValueAsString(credential);
        } catch (IOException e) {
            throw new IllegalStateException(e); // maps of strings and booleans always serialize
        }
    }

    /**
     * Copies {@code in} into {@code into} up to {@code max} bytes; false when there was more. Past {@code max}, the
     * rest is read and dropped when {@code toTheEnd} (a plugin blocked writing its error output would never end),
     * else left.
     */
    private static boolean drain(InputStream in, ByteArrayOutputStream into, int max, boolean toTheEnd) {
        byte[] buffer = new byte[8192];
        boolean whole = true;
        try (in) {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (into.size() + n > max) {
                    into.write(buffer, 0, max - into.size());
                    whole = false;
                    if (!toTheEnd) {
                        return false;
                    }
                } else if (whole) {
                    into.write(buffer, 0, n);
                }
            }
        } catch (IOException e) {
            // closed because the plugin is being ended: what came is what there is
        }
        return whole;
    }

    private static void end(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
