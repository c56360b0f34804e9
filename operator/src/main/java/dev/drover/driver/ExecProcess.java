package dev.drover.driver;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;

/**
 * A command running inside a task ({@link Driver#exec}). Whoever starts one ends it: {@link #close()} kills the
 * command and what it started if it still runs, and releases its streams.
 */
public interface ExecProcess extends AutoCloseable {

    /** The command's standard input; closing it is the end of input. Closed from the start without {@code stdin}. */
    OutputStream stdin();

    /** The command's standard output (with a terminal: everything the terminal shows). */
    InputStream stdout();

    /** The command's standard error; at its end at once with a terminal. */
    InputStream stderr();

    /** Sets the terminal's size; does nothing for a command without a terminal. */
    void resize(int columns, int rows) throws IOException;

    /**
     * Completes with the command's exit code once it has exited; 128 + N when signal N ended it, as a shell says.
     */
    CompletableFuture<Integer> exit();

    /** Kills the command and what it started, if they still run, and closes the streams. */
    @Override
    void close();
}
