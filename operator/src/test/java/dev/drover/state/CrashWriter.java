package dev.drover.state;

import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The child process of {@link CrashSafetyTest}: writes without pause from
 * several threads and prints {@code ack <task> <seq> end} after each write the
 * store acknowledged, until it is killed.
 */
public final class CrashWriter {

    static final AllocId ALLOC = new AllocId("default", "crash");
    static final int WRITERS = 4;

    private CrashWriter() {}

    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        PrintStream out = System.out;
        StateDB db = StateStores.open(dataDir);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            String task = "w" + w;
            long start = db.getTaskState(ALLOC, task).map(CrashWriter::seq).orElse(0L);
            threads.add(Thread.ofPlatform().start(() -> {
                for (long seq = start + 1; ; seq++) {
                    db.putTaskState(ALLOC, task, value(task, seq));
                    if (seq % 3 == 0) {
                        // A duplicate is acknowledged too, and must be just as safe.
                        db.putTaskState(ALLOC, task, value(task, seq));
                    }
                    synchronized (out) {
                        out.println("ack " + task + " " + seq + " end");
                        out.flush();
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    /** A value whose payload is derived from its key and sequence, so damage is detectable. */
    static TaskState value(String task, long seq) {
        TaskState state = new TaskState();
        state.setRestarts(Math.toIntExact(seq));
        TaskEvent event = new TaskEvent();
        event.setType(TaskEventType.Started);
        event.setMessage(payload(task, seq));
        state.setEvents(List.of(event));
        return state;
    }

    /** The sequence {@link #value} wrote. */
    static long seq(TaskState value) {
        return value.getRestarts();
    }

    static String payload(TaskState value) {
        return value.getEvents().getFirst().getMessage();
    }

    static String payload(String task, long seq) {
        byte[] hash = Blake2b.hash256((task + ":" + seq).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(hash).repeat(8);
    }
}
