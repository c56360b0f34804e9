package dev.drover.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;

/** Remembers the live threads at a point and asserts later that no new one is still alive. */
public final class ThreadLeaks {

    private final Set<Thread> before;

    private ThreadLeaks(Set<Thread> before) {
        this.before = before;
    }

    public static ThreadLeaks snapshot() {
        return new ThreadLeaks(Thread.getAllStackTraces().keySet());
    }

    /**
     * A thread that is ending (awaitility's poller, whose executor is shut down but not awaited when its wait
     * returns) gets a second to end; one that lives on is a leak.
     */
    public void assertNoNewThreads() {
        Set<String> leaked = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !before.contains(t))
                // the JDK's own helpers (virtual-thread carriers and unblocker, attach) are not ours to join
                .filter(t -> !t.getName().startsWith("ForkJoinPool")
                        && !t.getName().startsWith("Attach")
                        && !t.getName().equals("VirtualThread-unblocker")
                        && !t.getName().equals("Common-Cleaner"))
                .filter(t -> !endsSoon(t))
                .map(Thread::getName)
                .collect(Collectors.toSet());
        assertThat(leaked).as("threads started and not joined").isEmpty();
    }

    private static boolean endsSoon(Thread t) {
        try {
            return t.join(Duration.ofSeconds(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
