package dev.drover.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the bench reads from the agent it measures: its readiness, its metrics and its heap, over its HTTP port. */
final class AgentProbe {

    private static final Path JCMD = Path.of(System.getProperty("java.home"), "bin", "jcmd");

    private final HttpClient http;
    private final int port;

    /** {@code http} is the bench's one client (each HttpClient has its own threads); the bench closes it. */
    AgentProbe(HttpClient http, int port) {
        this.http = http;
        this.port = port;
    }

    int port() {
        return port;
    }

    boolean ready() {
        return get("/readyz").map(r -> r.statusCode() == 200).orElse(false);
    }

    String metrics() {
        return get("/metrics").map(HttpResponse::body).orElse("");
    }

    double runningAllocations() {
        return sum(metrics(), "drover_allocations\\{client_status=\"Running\",?\\}");
    }

    /** Whether this Java has the jcmd that {@link #heapAfterGc} needs (a JDK's; a runtime image has none). */
    static boolean canCollect() {
        return Files.isExecutable(JCMD);
    }

    /** The agent's used heap after a full collection. */
    double heapAfterGc(long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(JCMD.toString(), Long.toString(pid), "GC.run")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        p.waitFor(60, TimeUnit.SECONDS);
        return sum(metrics(), "jvm_memory_bytes_used\\{area=\"heap\",?\\}");
    }

    /** The sum of every sample of the series matching {@code series} (a regex of name and labels). */
    static double sum(String metrics, String series) {
        Matcher m = Pattern.compile("(?m)^" + series + " ([0-9.eE+-]+)$").matcher(metrics);
        double total = 0;
        while (m.find()) {
            total += Double.parseDouble(m.group(1));
        }
        return total;
    }

    /** GET {@code path} from the agent's HTTP port; empty while nothing answers there. */
    private Optional<HttpResponse<String>> get(String path) {
        try {
            return Optional.of(http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                            .build(),
                    HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
