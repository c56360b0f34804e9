package dev.drover.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Every live thread of this JVM, virtual ones included, from a JSON thread dump: {@link Thread#getAllStackTraces}
 * lists platform threads only, so a leaked virtual thread would pass a check built on it.
 */
public final class LiveThreads {

    /** One live thread: its id, name, whether it is virtual, and where it stands (its top frame). */
    public record Live(long tid, String name, boolean virtual, String at) {
        @Override
        public String toString() {
            return (virtual ? "virtual " : "") + "thread #" + tid + " \"" + name + "\" at " + at;
        }
    }

    private LiveThreads() {}

    /** The threads alive now. */
    public static List<Live> now() {
        try {
            Path file = Files.createTempFile("threads", ".json");
            try {
                Files.delete(file); // dumpThreads refuses to overwrite
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                        .dumpThreads(file.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
                return parse(new ObjectMapper().readTree(file.toFile()));
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The ids of {@code threads}, to compare a later {@link #now()} against. */
    public static Set<Long> ids(List<Live> threads) {
        return threads.stream().map(Live::tid).collect(Collectors.toSet());
    }

    /** The threads alive now that were not in {@code before} and that {@code ignored} does not match. */
    public static List<Live> startedSince(Set<Long> before, Predicate<Live> ignored) {
        return now().stream()
                .filter(t -> !before.contains(t.tid()) && !ignored.test(t))
                .toList();
    }

    private static List<Live> parse(JsonNode dump) {
        List<Live> threads = new ArrayList<>();
        for (JsonNode container : dump.path("threadDump").path("threadContainers")) {
            for (JsonNode t : container.path("threads")) {
                JsonNode stack = t.path("stack");
                threads.add(new Live(
                        t.path("tid").asLong(),
                        t.path("name").asText(),
                        t.path("virtual").asBoolean(),
                        stack.isEmpty() ? "?" : stack.get(0).asText()));
            }
        }
        return threads;
    }
}
