package dev.drover.execstream;

import dev.drover.driver.ExecProcess;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Pipe;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A command for tests: its streams are pipes the test (or a script thread) writes and reads; {@link #close()} kills
 * it (its exit completes with 137 unless it has exited).
 */
public final class FakeExecProcess implements ExecProcess {

    private final Pipe in;
    private final Pipe out;
    private final Pipe err;
    private final OutputStream stdin;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private final List<String> resizes = new CopyOnWriteArrayList<>();
    private volatile boolean killed;
    private Thread script;

    public FakeExecProcess() {
        try {
            in = Pipe.open();
            out = Pipe.open();
            err = Pipe.open();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        stdin = java.nio.channels.Channels.newOutputStream(in.sink());
    }

    /** A command that copies its input to its output and exits 0 at the end of its input. */
    public static FakeExecProcess cat() {
        FakeExecProcess p = new FakeExecProcess();
        p.script = Thread.ofVirtual().start(() -> {
            try (InputStream input = p.commandInput();
                    OutputStream output = p.commandOutput();
                    OutputStream errors = p.commandErrors()) {
                input.transferTo(output);
            } catch (IOException e) {
                // killed
            }
            p.exit.complete(p.killed ? 137 : 0);
        });
        return p;
    }

    /** A command that writes {@code errors} to its standard error and exits with {@code code}. */
    public static FakeExecProcess failing(String errors, int code) {
        FakeExecProcess p = new FakeExecProcess();
        p.script = Thread.ofVirtual().start(() -> {
            try (OutputStream output = p.commandOutput();
                    OutputStream e = p.commandErrors()) {
                e.write(errors.getBytes());
            } catch (IOException e) {
                // killed
            }
            p.exit.complete(code);
        });
        return p;
    }

    /** What the command reads. */
    public InputStream commandInput() {
        return java.nio.channels.Channels.newInputStream(in.source());
    }

    /** Where the command writes its output. */
    public OutputStream commandOutput() {
        return java.nio.channels.Channels.newOutputStream(out.sink());
    }

    public OutputStream commandErrors() {
        return java.nio.channels.Channels.newOutputStream(err.sink());
    }

    /** Ends the command with {@code code} (its output streams must be closed by the caller). */
    public void exitWith(int code) {
        exit.complete(code);
    }

    public boolean killed() {
        return killed;
    }

    public List<String> resizes() {
        return resizes;
    }

    /** Everything the command's input held, read to its end. */
    public byte[] readInput() throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        commandInput().transferTo(all);
        return all.toByteArray();
    }

    @Override
    public OutputStream stdin() {
        return stdin;
    }

    @Override
    public InputStream stdout() {
        return java.nio.channels.Channels.newInputStream(out.source());
    }

    @Override
    public InputStream stderr() {
        return java.nio.channels.Channels.newInputStream(err.source());
    }

    @Override
    public void resize(int columns, int rows) {
        resizes.add(columns + "x" + rows);
    }

    @Override
    public CompletableFuture<Integer> exit() {
        return exit;
    }

    @Override
    public void close() {
        if (!exit.isDone()) {
            killed = true;
        }
        for (java.nio.channels.Channel c :
                List.of(in.sink(), in.source(), out.sink(), out.source(), err.sink(), err.source())) {
            try {
                c.close();
            } catch (IOException e) {
                // closing
            }
        }
        exit.complete(137);
        if (script != null) {
            try {
                script.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
