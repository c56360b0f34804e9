package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An exec check: runs the check's command inside the task ({@link CheckProber.Target#exec}); exit 0 passes, 1 warns,
 * anything else is critical. Its standard output and error are read together and their first {@link
 * ProbeOutput#KEPT_BYTES} bytes kept as the output; the rest is read and dropped, so that a command writing without
 * end costs no memory and does not block on a full pipe. At the check's timeout the command is killed and the probe
 * is critical. The command is always ended ({@link ExecProcess#close()}) before the probe returns, and so are the
 * threads reading its output.
 */
final class ExecProbe implements Probe {

    /** How long the readers may take to end once the command is closed: closing its streams ends them. */
    private static final Duration READERS_END = Duration.ofSeconds(1);

    @Override
    public ProbeResult run(Check check, CheckProber.Target target) throws InterruptedException {
        Duration timeout = check.effectiveTimeout();
        long deadline = System.nanoTime() + timeout.toNanos();
        ExecRequest request;
        try {
            List<String> command = new ArrayList<>();
            command.add(check.getCommand() == null ? "" : check.getCommand());
            command.addAll(check.effectiveArgs());
            request = new ExecRequest(command, false, false);
        } catch (IllegalArgumentException e) {
            return ProbeResult.critical("cannot run the check's command: " + e.getMessage());
        }
        ExecProcess process;
        try {
            process = target.exec(request);
        } catch (DriverException e) {
            return ProbeResult.critical("cannot run " + request.describe() + ": " + e.getMessage());
        }
        Output output = new Output();
        List<Thread> readers = new ArrayList<>(2);
        try (process) {
            readers.add(Thread.ofVirtual().name("drover-check-exec-out").start(() -> output.drain(process.stdout())));
            readers.add(Thread.ofVirtual().name("drover-check-exec-err").start(() -> output.drain(process.stderr())));
            int exit;
            try {
                exit = process.exit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return ProbeResult.critical(ProbeOutput.timedOut(timeout));
            } catch (ExecutionException e) {
                return ProbeResult.critical("lost track of " + request.describe() + ": "
                        + String.valueOf(e.getCause().getMessage()));
            }
            // What the command wrote before it exited may still be in the pipes: read it, within the deadline.
            for (Thread reader : readers) {
                reader.join(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
            String text = output.text();
            String said = exit == 0 && !text.isEmpty()
                    ? text
                    : ProbeOutput.clean("exit code " + exit + (text.isEmpty() ? "" : ": " + text));
            return switch (exit) {
                case 0 -> ProbeResult.passing(said);
                case 1 -> ProbeResult.warning(said);
                default -> ProbeResult.critical(said);
            };
        } finally {
            endReaders(readers);
        }
    }

    /**
     * The process is closed (its streams too) by now, which ends the readers; one that a stream still holds is
     * interrupted (which ends a read that parks, as the host drivers' do), so that no probe leaves a reader behind.
     */
    private static void endReaders(List<Thread> readers) throws InterruptedException {
        long deadline = System.nanoTime() + READERS_END.toNanos();
        try {
            for (Thread reader : readers) {
                reader.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
            }
        } finally {
            readers.stream().filter(Thread::isAlive).forEach(Thread::interrupt);
        }
    }

    /** The first bytes of both streams together; the rest is counted only. */
    private static final class Output {
        private final byte[] kept = new byte[ProbeOutput.KEPT_BYTES];
        private int length;

        void drain(InputStream in) {
            byte[] buffer = new byte[4096];
            try (in) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    keep(buffer, n);
                }
            } catch (IOException e) {
                // Closed with the command, or broken: what was read is the output.
            }
        }

        private synchronized void keep(byte[] bytes, int n) {
            int room = Math.min(n, kept.length - length);
            if (room > 0) {
                System.arraycopy(bytes, 0, kept, length, room);
                length += room;
            }
        }

        synchronized String text() {
            return ProbeOutput.decode(kept, length);
        }
    }
}
