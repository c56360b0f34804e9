package dev.drover.driver.host;

import dev.drover.cgroups.Cgroup;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import java.io.File;
import java.io.IOException;
import java.util.Optional;

/**
 * The standard streams of a command run for a caller ({@link TaskExec}, {@link HostCommand}): a terminal of the
 * agent's when the request asks for one (the command opens its slave itself, as its controlling terminal), else pipes.
 */
final class CommandStdio {

    private final Pty pty;
    private final ExecPipe.Streams pipes;

    private CommandStdio(Pty pty, ExecPipe.Streams pipes) {
        this.pty = pty;
        this.pipes = pipes;
    }

    /** {@code request}'s streams; {@code relayed}: the terminal is one a program relays ({@link Pty#forRelay()}). */
    static CommandStdio open(ExecRequest request, boolean relayed) throws IOException {
        if (request.tty()) {
            return new CommandStdio(relayed ? Pty.forRelay() : Pty.open(), null);
        }
        return new CommandStdio(null, ExecPipe.Streams.open(request.stdin()));
    }

    boolean terminal() {
        return pty != null;
    }

    /** The terminal's slave for the command to open, {@code -} with pipes. */
    String slave() {
        return pty == null ? "-" : pty.slave().toString();
    }

    /** Gives {@code pb} the pipes; with a terminal, nothing: the command opens the slave. */
    void redirect(ProcessBuilder pb) {
        if (pty != null) {
            pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD);
        } else {
            pipes.redirect(pb);
        }
    }

    /** The running command, its streams handed to it; {@code session} is the cgroup closing it ends, if any. */
    ExecProcess started(Process process, ExecRequest request, Optional<Cgroup> session) {
        if (pipes != null) {
            pipes.started();
        }
        return new HostExecProcess(
                process, Optional.ofNullable(pty), Optional.ofNullable(pipes), request.stdin(), session);
    }

    /** Closes the streams of a command that did not start. */
    void close() {
        if (pty != null) {
            pty.close();
        }
        if (pipes != null) {
            pipes.close();
        }
    }
}
