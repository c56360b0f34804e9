package dev.drover.cli.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs a kubeconfig's {@code exec} credential plugin as kubectl does: the command with its args, the kubeconfig's
 * env added to ours and {@code KUBERNETES_EXEC_INFO} (an ExecCredential, not interactive), no input; its output is
 * an ExecCredential whose status holds a token or a client certificate and key. What it writes to stderr (a login
 * prompt: open this page, enter this code) is passed on line by line as it comes, as kubectl passes it to the
 * terminal. A plugin is a program from the kubeconfig: its output is bounded, it has a deadline, and what it says
 * on failure is cut and escaped. A bare command is looked up in PATH's absolute directories only, as Go's exec does
 * since 1.19: a "." or empty entry would run whatever of that name the current directory holds.
 */
public final class ExecPlugin {

    public static final String V1 = "client.authentication.k8s.io/v1";
    public static final String V1BETA1 = "client.authentication.k8s.io/v1beta1";

    /** An ExecCredential is a token or a certificate: a few KiB. */
    static final int MAX_OUTPUT = 1 << 20;

    static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final int MAX_ERROR = 16 << 10;
    /** A longer stderr line is passed on in pieces of this many bytes. */
    private static final int MAX_LINE = 4096;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the plugin gave: a token, or a client certificate and key (PEM); the others null. */
    public record Credential(String token, byte[] clientCertPem, byte[] clientKeyPem) {}

    private ExecPlugin() {}

    /** Runs the plugin; each line of its stderr goes to {@code says} as it comes. */
    public static Credential run(ExecConfig exec, Consumer<String> says) throws KubeconfigException {
        return run(exec, DEADLINE, says, System.getenv("PATH"));
    }

    static Credential run(ExecConfig exec, Duration deadline, Consumer<String> says, String pathVariable)
            throws KubeconfigException {
        String what = "the exec plugin " + UserText.quote(exec.command());
        String program = resolve(exec.command(), pathVariable);
        if (program == null) {
            throw new KubeconfigException("cannot run " + what + " (not found in PATH's absolute directories)"
                    + (exec.installHint() == null ? "" : ": " + UserText.cutEscaped(exec.installHint(), 400)));
        }
        List<String> command = new ArrayList<>();
        command.add(program);
        command.addAll(exec.args());
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.PIPE);
        builder.environment().putAll(exec.env());
        builder.environment().put("KUBERNETES_EXEC_INFO", info(exec));
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new KubeconfigException("cannot run " + what + " (" + UserText.cutEscaped(e.getMessage(), 200) + ")"
                    + (exec.installHint() == null ? "" : ": " + UserText.cutEscaped(exec.installHint(), 400)));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PluginErr err = new PluginErr(says);
        boolean[] tooMuch = {false};
        Thread readOut = Thread.ofVirtual().name("exec-plugin-out").start(() -> {
            tooMuch[0] = !drain(process.getInputStream(), out, MAX_OUTPUT);
            if (tooMuch[0]) {
                end(process);
            }
        });
        Thread readErr = Thread.ofVirtual().name("exec-plugin-err").start(() -> err.pass(process.getErrorStream()));
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
            // its last words: what it said before was passed on as it came
            String said = err.tail().strip().replaceAll("\\s*\n\\s*", " ");
            if (said.length() > 400) {
                said = "..." + said.substring(said.length() - 400);
            }
            throw new KubeconfigException(what + " failed (exit code " + process.exitValue() + ")"
                    + (said.isEmpty() ? "" : ": " + UserText.cutEscaped(said, 420)));
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
    static String info(ExecConfig exec) throws KubeconfigException {
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
        } catch (IOException e) { // the cluster's exec extension is the kubeconfig's: nested too deep, say
            throw new KubeconfigException("the cluster's client.authentication.k8s.io/exec extension cannot be given to"
                    + " the exec plugin (nested too deeply)");
        }
    }

    /**
     * {@code command} as the program to start: a path (with a '/') as it is, a bare name as the first executable file
     * of that name in an absolute directory of {@code pathVariable}; null when there is none.
     */
    static String resolve(String command, String pathVariable) {
        if (command.contains("/")) {
            return command;
        }
        for (String dir : pathVariable == null ? new String[0] : pathVariable.split(File.pathSeparator)) {
            if (dir.isEmpty() || !Path.of(dir).isAbsolute()) {
                continue;
            }
            Path candidate = Path.of(dir, command);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return null;
    }

    /** Copies {@code in} into {@code into} up to {@code max} bytes; false when there was more (the rest is left). */
    private static boolean drain(InputStream in, ByteArrayOutputStream into, int max) {
        byte[] buffer = new byte[8192];
        try (in) {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (into.size() + n > max) {
                    into.write(buffer, 0, max - into.size());
                    return false;
                }
                into.write(buffer, 0, n);
            }
        } catch (IOException e) {
            // closed because the plugin is being ended: what came is what there is
        }
        return true;
    }

    /**
     * The plugin's stderr: each line handed on as it ends (a long one in pieces), and the last {@link #MAX_ERROR}
     * bytes kept for the error. Read to its end, whatever its length: a plugin blocked writing it would never end.
     */
    private static final class PluginErr {
        private final Consumer<String> says;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private final StringBuilder tail = new StringBuilder();

        PluginErr(Consumer<String> says) {
            this.says = says;
        }

        void pass(InputStream in) {
            byte[] buffer = new byte[8192];
            try (in) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    for (int i = 0; i < n; i++) {
                        if (buffer[i] == '\n') {
                            flush();
                        } else {
                            line.write(buffer[i]);
                            if (line.size() >= MAX_LINE) {
                                flush();
                            }
                        }
                    }
                }
            } catch (IOException e) {
                // closed because the plugin is being ended: what came is what there is
            }
            if (line.size() > 0) {
                flush();
            }
        }

        private void flush() {
            String text = line.toString(StandardCharsets.UTF_8);
            line.reset();
            synchronized (tail) {
                tail.append(text).append('\n');
                if (tail.length() > MAX_ERROR) {
                    tail.delete(0, tail.length() - MAX_ERROR);
                }
            }
            try {
                says.accept(text);
            } catch (RuntimeException e) {
                // a closed terminal: the plugin still runs to its end
            }
        }

        String tail() {
            synchronized (tail) {
                return tail.toString();
            }
        }
    }

    private static void end(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
