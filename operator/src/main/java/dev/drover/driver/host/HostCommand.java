package dev.drover.driver.host;

import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A command a driver runs on the host on a caller's behalf, in a session and process group of its own that closing
 * it ends ({@link HostExecProcess}): for drivers whose tasks have their own way in (the oci driver's {@code runc
 * exec}), where {@link TaskExec}'s namespaces do not apply. Without a terminal its standard streams are pipes. With
 * one, they are a {@link Pty#forRelay() relayed} terminal of the agent's, the controlling terminal of the command's
 * session: the command is a program that makes the terminal of what it runs and relays between the two, as the OCI
 * runtime's {@code exec -t} does in the foreground (it sets this terminal raw, copies both ways, and at each SIGWINCH,
 * which a {@link ExecProcess#resize} sends its process group, gives its own terminal this one's size).
 */
public final class HostCommand {

    /** Arguments: the terminal, then the command. The terminal becomes the new session's controlling terminal. */
    static final String ON_TERMINAL = """
            command exec <>"$1" >&0 2>&0 || { echo "drover: exec: cannot open $1" >&2; exit 126; }
            shift
            exec "$@"
            """;

    private HostCommand() {}

    /** Starts {@code argv} (a host program and its arguments) for {@code request}; the agent's variables stay out. */
    public static ExecProcess start(List<String> argv, ExecRequest request) throws IOException {
        CommandStdio stdio = CommandStdio.open(request, true);
        Process process = null;
        try {
            List<String> words = new ArrayList<>(List.of("setsid"));
            if (stdio.terminal()) {
                words.addAll(List.of("/bin/sh", "-c", ON_TERMINAL, "drover-exec", stdio.slave()));
            }
            words.addAll(argv);
            ProcessBuilder pb = new ProcessBuilder(words).directory(new File("/"));
            pb.environment().clear();
            pb.environment().put("PATH", TaskEnvironment.DEFAULT_PATH);
            stdio.redirect(pb);
            process = pb.start();
            return stdio.started(process, request, Optional.empty());
        } catch (IOException | RuntimeException e) {
            if (process != null) {
                process.destroyForcibly();
            }
            stdio.close();
            throw e;
        }
    }
}
