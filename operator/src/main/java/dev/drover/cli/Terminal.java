package dev.drover.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The local terminal of {@code kubectl drover exec -t}, through {@code stty} on {@code /dev/tty}: raw mode (keys go
 * to the remote command as typed, Ctrl-C included) until {@link #restore}, and its size. Java cannot catch SIGWINCH,
 * so the size is polled ({@link ExecCommand} asks once a second and sends it when it changed).
 */
final class Terminal {

    private static final File TTY = new File("/dev/tty");

    private final String saved;

    private final java.util.concurrent.atomic.AtomicBoolean restored = new java.util.concurrent.atomic.AtomicBoolean();
    private final Thread hook = new Thread(this::restore, "terminal-restore");

    private Terminal(String saved) {
        this.saved = saved;
    }

    /** The terminal, put in raw mode; empty when there is none (no {@code /dev/tty}, or stty fails). */
    static Optional<Terminal> raw() {
        if (!TTY.canRead() || System.console() == null) {
            return Optional.empty();
        }
        try {
            String saved = stty("-g").trim();
            stty("raw", "-echo");
            Terminal terminal = new Terminal(saved);
            // a command line ended by a signal (SIGTERM, SIGHUP) skips the caller's finally: the hook restores then
            Runtime.getRuntime().addShutdownHook(terminal.hook);
            return Optional.of(terminal);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Columns and rows, or null when stty cannot say. */
    int[] size() {
        try {
            String[] rowsCols = stty("size").trim().split("\\s+");
            return new int[] {Integer.parseInt(rowsCols[1]), Integer.parseInt(rowsCols[0])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Back to the mode it was in; once, however many times it is called. */
    void restore() {
        if (!restored.compareAndSet(false, true)) {
            return;
        }
        if (Thread.currentThread() != hook) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs, or ran, and finds it restored
            }
        }
        try {
            stty(saved);
        } catch (IOException e) {
            System.err.println("kubectl drover: cannot restore the terminal (run: stty sane): " + e.getMessage());
        }
    }

    private static String stty(String... args) throws IOException {
        String[] command = new String[args.length + 1];
        command[0] = "stty";
        System.arraycopy(args, 0, command, 1, args.length);
        Process p = new ProcessBuilder(command)
                .redirectInput(TTY)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            String out = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8);
            if (!p.waitFor(5, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IOException("stty " + String.join(" ", args) + " failed");
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted", e);
        }
    }
}
