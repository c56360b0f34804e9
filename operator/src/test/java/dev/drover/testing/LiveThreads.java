package dev.drover.testing;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Every live thread of this JVM, virtual ones included. {@link Thread#getAllStackTraces} lists platform threads only,
 * so a leaked virtual thread would pass a check built on it; the JDK's thread dump lists them all but takes a
 * snapshot of each thread, which crashed HotSpot 25.0.3 when a thread ended meanwhile (JDK-8359870, SIGSEGV in
 * {@code JVM_CreateThreadSnapshot}, seen in CI). So the threads come from the JDK's thread containers (what the dump
 * walks, without snapshots): the root one holds every platform thread and every tracked virtual thread, the others
 * (executors made by {@code Executors.newThreadPerTaskExecutor}) theirs. That needs {@code --add-exports
 * java.base/jdk.internal.vm=ALL-UNNAMED} (the build's {@code surefire.argLine}); a top frame is read only for a
 * thread that is shown.
 */
public final class LiveThreads {

    /** One live thread: its id, name, whether it is virtual; {@link #at()} is where it stands (its top frame). */
    public record Live(long tid, String name, boolean virtual, Thread thread) {
        /** Its top frame now, or {@code ?} when it has none (ended, or not started on a carrier). */
        public String at() {
            StackTraceElement[] stack = thread.getStackTrace();
            return stack.length == 0 ? "?" : stack[0].toString();
        }

        @Override
        public String toString() {
            return (virtual ? "virtual " : "") + "thread #" + tid + " \"" + name + "\" at " + at();
        }
    }

    private static final Method ROOT;
    private static final Method THREADS;
    private static final Method CHILDREN;

    static {
        try {
            Class<?> containers = Class.forName("jdk.internal.vm.ThreadContainers");
            Class<?> container = Class.forName("jdk.internal.vm.ThreadContainer");
            ROOT = containers.getMethod("root");
            THREADS = container.getMethod("threads");
            CHILDREN = container.getMethod("children");
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private LiveThreads() {}

    /** The threads alive now. */
    public static List<Live> now() {
        Map<Long, Live> threads = new LinkedHashMap<>();
        try {
            collect(ROOT.invoke(null), threads);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(
                    "LiveThreads needs --add-exports java.base/jdk.internal.vm=ALL-UNNAMED on the test JVM", e);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        return List.copyOf(threads.values());
    }

    private static void collect(Object container, Map<Long, Live> into) throws ReflectiveOperationException {
        List<Thread> threads;
        List<?> children;
        try (Stream<?> s = (Stream<?>) THREADS.invoke(container)) {
            threads = s.map(Thread.class::cast).toList();
        }
        try (Stream<?> s = (Stream<?>) CHILDREN.invoke(container)) {
            children = s.toList();
        }
        for (Thread t : threads) {
            if (t.isAlive()) {
                into.putIfAbsent(t.threadId(), new Live(t.threadId(), t.getName(), t.isVirtual(), t));
            }
        }
        for (Object child : children) {
            collect(child, into);
        }
    }

    /** The ids of {@code threads}, to compare a later {@link #now()} against. */
    public static Set<Long> ids(List<Live> threads) {
        return threads.stream().map(Live::tid).collect(Collectors.toSet());
    }

    /** The threads alive now that were not in {@code before} and that {@code ignored} does not match. */
    public static List<Live> startedSince(Set<Long> before, Predicate<Live> ignored) {
        List<Live> started = new ArrayList<>();
        for (Live t : now()) {
            if (!before.contains(t.tid()) && !ignored.test(t)) {
                started.add(t);
            }
        }
        return started;
    }
}
