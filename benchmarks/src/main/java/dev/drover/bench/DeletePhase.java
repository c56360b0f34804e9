package dev.drover.bench;

import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code bench --delete}: deletes every allocation at once, from 16 threads as the creates, each a plain DELETE, and
 * times until a watch has seen the last of them gone (the agent has destroyed it and removed its finalizer).
 */
final class DeletePhase {

    private DeletePhase() {}

    /** A wait until {@code gone} holds {@code allocs} names. */
    interface Wait {
        void until(Map<String, Long> gone) throws InterruptedException;
    }

    /**
     * Deletes {@code bench-0} to {@code bench-(allocs-1)} and waits (through {@code wait}) until all are gone.
     *
     * @return the seconds from the first delete to the last allocation gone
     */
    static double run(HttpClient http, javax.net.ssl.SSLContext tls, URI server, int allocs, Wait wait)
            throws Exception {
        URI collection = server.resolve("/apis/drover.dev/v1alpha1/namespaces/default/allocations/");
        Map<String, Long> gone = new ConcurrentHashMap<>();
        Map<String, Long> running = new ConcurrentHashMap<>();
        try (RunningWatch watch = new RunningWatch(tls, server, running, gone)) {
            long begin = System.nanoTime();
            try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
                List<Future<?>> sent = new ArrayList<>();
                for (int i = 0; i < allocs; i++) {
                    String name = "bench-" + i;
                    sent.add(pool.submit(() -> {
                        HttpResponse<String> r = http.send(
                                HttpRequest.newBuilder(collection.resolve(name))
                                        .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                                        .DELETE()
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() != 200 && r.statusCode() != 202) {
                            throw new IOException("deleting " + name + ": HTTP " + r.statusCode() + " " + r.body());
                        }
                        return null;
                    }));
                }
                for (var f : sent) {
                    f.get();
                }
            }
            wait.until(gone);
            return (System.nanoTime() - begin) / 1e9;
        }
    }
}
