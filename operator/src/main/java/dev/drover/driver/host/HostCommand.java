package dev.drover.driver.host;

import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A command a driver runs on the host on a caller's behalf, with pipes for its standard streams, in a session and
 * process group of its own that closing it ends ({@link HostExecProcess}): for drivers whose tasks have their own way
 * in (the oci driver's {@code runc exec}), where {@link TaskExec}'s namespaces do not apply. No terminal: the caller
 * refuses a request for one.
 */
public final class HostCommand {

    private HostCommand() {}

    /** Starts {@code argv} (a host program and its arguments) for {@code request}; the agent's variables stay out. */
    public static ExecProcess start(List<String> argv, ExecRequest request) throws IOException {
        if (request.tty()) {
            throw new IllegalArgumentException("a host command runs without a terminal");
        }
        ExecPipe.Streams pipes = ExecPipe.Streams.open(request.stdin());
        Process process = null;
        try {
            List<String> words = new ArrayList<>(List.of("setsid"));
            words.addAll(argv);
            ProcessBuilder pb = new ProcessBuilder(words).directory(new File("/"));
            pb.environment().clear();
            pb.environment().put("PATH", TaskEnvironment.DEFAULT_PATH);
            pipes.redirect(pb);
            process = pb.start();
            pipes.started();
            return new HostExecProcess(
                    process, Optional.empty(), Optional.of(pipes), request.stdin(), Optional.empty());
        } catch (IOException | RuntimeException e) {
            if (process != null) {
                process.destroyForcibly();
            }
            pipes.close();
            throw e;
        }
    }
}
