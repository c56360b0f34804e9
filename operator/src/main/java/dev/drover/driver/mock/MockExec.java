package dev.drover.driver.mock;

import dev.drover.common.ConfigReader;
import dev.drover.common.UserText;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The commands a mock task "runs" when asked to ({@code kubectl drover exec}, an exec check): its config's {@code
 * exec} map, from the command's first word to a {@link Script}. A word not in it fails as a shell's unknown command
 * does (exit 127, {@code command not found} on stderr).
 */
final class MockExec {

    /** The most commands one task may script. */
    static final int MAX_COMMANDS = 64;
    /** What a shell exits with for a command it cannot find. */
    static final int NOT_FOUND = 127;
    /** A command killed by {@link ExecProcess#close()}: SIGKILL, as a shell reports it. */
    static final int KILLED = 128 + 9;

    /**
     * One scripted command: it writes {@code stdout}, then {@code stderr} (on stdout too with a terminal), copies its
     * input to its output until the input ends when {@code echoStdin}, runs until {@code runFor} has passed since it
     * started (when given), then exits with {@code exitCode}. With a terminal and {@code printSize}, each resize writes
     * the new size as {@code stty size} prints it ({@code ROWS COLUMNS}) to stdout.
     */
    record Script(String stdout, String stderr, int exitCode, boolean echoStdin, Duration runFor, boolean printSize) {}

    private MockExec() {}

    /** The config's {@code exec} map, read into {@code scripts}; its problems go to {@code r}, named by key. */
    static Map<String, Script> parse(ConfigReader r, Map<String, Object> raw) {
        Map<String, Script> scripts = new LinkedHashMap<>();
        if (raw == null) {
            return scripts;
        }
        if (raw.size() > MAX_COMMANDS) {
            r.problem("config.exec: " + raw.size() + " commands, more than " + MAX_COMMANDS);
            return scripts;
        }
        for (Map.Entry<String, Object> e : raw.entrySet()) {
            String prefix = "config.exec." + UserText.bare(e.getKey());
            if (e.getKey().isEmpty()) {
                r.problem("config.exec: a command's name is empty");
                continue;
            }
            if (!(e.getValue() instanceof Map<?, ?> m) || !m.keySet().stream().allMatch(k -> k instanceof String)) {
                r.problem(prefix + ": " + UserText.value(e.getValue())
                        + " is not a map (stdout, stderr, exitCode, echoStdin, runFor, printSize)");
                continue;
            }
            @SuppressWarnings("unchecked")
            ConfigReader c = new ConfigReader((Map<String, Object>) m);
            String stdout = c.string("stdout");
            String stderr = c.string("stderr");
            Integer exitCode = c.integer("exitCode");
            Boolean echoStdin = c.bool("echoStdin");
            Duration runFor = c.duration("runFor");
            Boolean printSize = c.bool("printSize");
            if (exitCode != null && (exitCode < 0 || exitCode > 255)) {
                c.problem("config.exitCode: " + exitCode + " is not an exit code (0 to 255)");
            }
            for (String problem : c.problems()) {
                r.problem(prefix + problem.substring("config".length()));
            }
            scripts.put(
                    e.getKey(),
                    new Script(
                            stdout == null ? "" : stdout,
                            stderr == null ? "" : stderr,
                            exitCode == null ? 0 : exitCode,
                            Boolean.TRUE.equals(echoStdin),
                            runFor,
                            Boolean.TRUE.equals(printSize)));
        }
        return scripts;
    }

    /** Starts {@code request} as {@code scripts} say, on a virtual thread of its own that {@code close} ends. */
    static ExecProcess start(Map<String, Script> scripts, ExecRequest request) {
        String word = request.command().getFirst();
        Script script = scripts.getOrDefault(
                word,
                new Script(
                        "",
                        "drover-mock: " + UserText.cut(word, 200) + ": command not found\n",
                        NOT_FOUND,
                        false,
                        null,
                        false));
        return new Running(script, request);
    }

    /** A scripted command while it runs. */
    private static final class Running implements ExecProcess {

        /** The longest a resize waits for the script's own output to be written. */
        private static final Duration WRITE_WAIT = Duration.ofSeconds(5);

        private final Script script;
        private final boolean tty;
        private final BytePipe in = new BytePipe();
        private final BytePipe out = new BytePipe();
        private final BytePipe err = new BytePipe();
        private final CompletableFuture<Integer> exit = new CompletableFuture<>();
        private final AtomicReference<String> size = new AtomicReference<>();
        /** Open once the script's own output is written: a size printed on a resize comes after it, as on a terminal. */
        private final CountDownLatch written = new CountDownLatch(1);

        private final Thread thread;

        Running(Script script, ExecRequest request) {
            this.script = script;
            this.tty = request.tty();
            if (!request.stdin()) {
                in.closeWriting();
            }
            if (tty) {
                err.closeWriting();
            }
            this.thread = Thread.ofVirtual().name("drover-mock-exec").start(this::run);
        }

        private void run() {
            long started = System.nanoTime();
            OutputStream errors = tty ? out.out() : err.out();
            try {
                out.out().write(script.stdout().getBytes(StandardCharsets.UTF_8));
                errors.write(script.stderr().getBytes(StandardCharsets.UTF_8));
                written.countDown();
                err.closeWriting();
                if (script.echoStdin()) {
                    in.in().transferTo(out.out());
                }
                if (script.runFor() != null) {
                    long left = script.runFor().toNanos() - (System.nanoTime() - started);
                    if (left > 0) {
                        Thread.sleep(Duration.ofNanos(left));
                    }
                }
                out.closeWriting();
                exit.complete(script.exitCode());
            } catch (IOException | InterruptedException e) {
                exit.complete(KILLED); // closed while it ran
            } finally {
                written.countDown();
                out.closeWriting();
                err.closeWriting();
            }
        }

        @Override
        public OutputStream stdin() {
            return in.out();
        }

        @Override
        public InputStream stdout() {
            return out.in();
        }

        @Override
        public InputStream stderr() {
            return err.in();
        }

        @Override
        public void resize(int columns, int rows) {
            if (!tty) {
                return;
            }
            String now = rows + " " + columns + "\n";
            if (script.printSize() && !now.equals(size.getAndSet(now)) && !exit.isDone()) {
                try {
                    if (!written.await(WRITE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                        return; // its output is not read: the size would wait behind it all the same
                    }
                    out.out().write(now.getBytes(StandardCharsets.UTF_8));
                } catch (IOException ended) {
                    // the command ended meanwhile: a resize then changes nothing, as on a closed terminal
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public CompletableFuture<Integer> exit() {
            return exit;
        }

        @Override
        public void close() {
            exit.complete(KILLED);
            thread.interrupt();
            for (BytePipe p : List.of(in, out, err)) {
                p.closeWriting();
                p.closeReading();
            }
            try {
                thread.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The scripts as a plain map again, for the task's handle (a mock task reattached later still runs them). */
    static Map<String, Object> describe(Map<String, Script> scripts) {
        Map<String, Object> raw = new LinkedHashMap<>();
        scripts.forEach((word, s) -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("stdout", s.stdout());
            m.put("stderr", s.stderr());
            m.put("exitCode", s.exitCode());
            m.put("echoStdin", s.echoStdin());
            if (s.runFor() != null) {
                m.put("runFor", s.runFor().toNanos() + "ns");
            }
            m.put("printSize", s.printSize());
            raw.put(word, m);
        });
        return raw;
    }
}
