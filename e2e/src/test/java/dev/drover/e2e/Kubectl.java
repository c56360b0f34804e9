package dev.drover.e2e;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The real kubectl binary, pointed at one kubeconfig; every call has a deadline so a hang fails the test. */
public final class Kubectl {

    public record Result(int exitCode, String out, String err) {
        public Result assertOk() {
            if (exitCode != 0) {
                throw new AssertionError("kubectl failed (" + exitCode + "): " + err + out);
            }
            return this;
        }
    }

    private final Path kubeconfig;
    private final Path binary;

    public Kubectl(Path kubeconfig) {
        this.kubeconfig = kubeconfig;
        this.binary = find();
        assumeTrue(binary != null, "kubectl not found on PATH: the end-to-end tests drive the real kubectl binary");
    }

    /** kubectl from PATH, or null. */
    public static Path find() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(dir, "kubectl");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    public Result run(String... args) {
        return runWithInput(null, args);
    }

    public Result runWithInput(String stdin, String... args) {
        return finish(start(args), stdin, args, 30);
    }

    /** Feeds {@code stdin} (or nothing), waits at most {@code seconds}, and collects what the process wrote. */
    private static Result finish(Process p, String stdin, String[] args, int seconds) {
        try {
            if (stdin != null) {
                p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            p.getOutputStream().close();
            var out = p.getInputStream().readAllBytes();
            var err = p.getErrorStream().readAllBytes();
            if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("kubectl " + String.join(" ", args) + " did not finish in " + seconds + "s");
            }
            return new Result(
                    p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new AssertionError("could not run kubectl: " + e, e);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Starts kubectl without waiting, for streaming commands ({@code get -w}); the caller destroys it. */
    public Process start(String... args) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.add("--cache-dir=" + kubeconfig.resolveSibling("kube-cache")); // no discovery cached across servers
        command.addAll(List.of(args));
        return start(command, null);
    }

    /** {@code kubectl NAME ARGS} for a plugin {@code kubectl-NAME} in {@code pluginDir}, found on PATH as users do. */
    public Result plugin(Path pluginDir, String... args) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(List.of(args));
        return finish(start(command, pluginDir), null, args, 60);
    }

    /** As {@link #plugin(Path, String...)}, with {@code stdin} as the plugin's standard input. */
    public Result pluginWithInput(Path pluginDir, String stdin, String... args) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(List.of(args));
        return finish(start(command, pluginDir), stdin, args, 60);
    }

    /** Starts a plugin without waiting, for streaming commands ({@code drover logs -f}); the caller destroys it. */
    public Process startPlugin(Path pluginDir, String... args) {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(List.of(args));
        return start(command, pluginDir);
    }

    private Process start(List<String> command, Path pluginDir) {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("KUBECONFIG", kubeconfig.toString());
        if (pluginDir != null) {
            // the plugin runs java: as on a user's machine, JDK 25 in JAVA_HOME and an older java first on PATH
            OldJava.apply(pb.environment(), pluginDir);
        }
        try {
            return pb.start();
        } catch (IOException e) {
            throw new AssertionError("could not start kubectl: " + e, e);
        }
    }

    /** {@code kubectl get alloc NAME -o jsonpath={PATH}}, which must succeed. */
    public String allocJsonpath(String alloc, String path) {
        return run("get", "alloc", alloc, "-o", "jsonpath={" + path + "}")
                .assertOk()
                .out();
    }

    /** {@link #allocJsonpath(String, String)} of an allocation in {@code namespace}. */
    public String allocJsonpath(String alloc, String path, String namespace) {
        return run("get", "alloc", alloc, "-n", namespace, "-o", "jsonpath={" + path + "}")
                .assertOk()
                .out();
    }

    /** {@link #waitForClientStatus(String, String, java.time.Duration)} of an allocation in {@code namespace}. */
    public void waitForClientStatus(String alloc, String status, java.time.Duration timeout, String namespace) {
        run(
                        "wait",
                        "-n",
                        namespace,
                        "alloc/" + alloc,
                        "--for=jsonpath={.status.clientStatus}=" + status,
                        "--timeout=" + timeout.toSeconds() + "s")
                .assertOk();
    }

    /** {@code kubectl wait} until the allocation's {@code clientStatus} is {@code status}, within {@code timeout}. */
    public void waitForClientStatus(String alloc, String status, java.time.Duration timeout) {
        run(
                        "wait",
                        "alloc/" + alloc,
                        "--for=jsonpath={.status.clientStatus}=" + status,
                        "--timeout=" + timeout.toSeconds() + "s")
                .assertOk();
    }
}
