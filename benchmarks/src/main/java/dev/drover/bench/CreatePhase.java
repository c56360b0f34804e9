package dev.drover.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.Network;
import dev.drover.api.v1alpha1.NetworkMode;
import dev.drover.api.v1alpha1.Port;
import dev.drover.api.v1alpha1.Task;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The allocations the bench creates, playing the users: {@code --allocs} of them, {@code bench-0} on, each of
 * {@code --tasks} tasks of the chosen driver (with an http check under {@code --http-check}), on one node. The time
 * each create returned is what a run's latency counts from.
 */
final class CreatePhase {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final BenchOptions options;
    private final String node;
    /** What the tasks' http checks probe, or null for none. */
    private final CheckTarget checks;

    CreatePhase(BenchOptions options, String node, CheckTarget checks) {
        this.options = options;
        this.node = node;
        this.checks = checks;
    }

    /**
     * Creates the allocations from 16 threads at once, each a plain POST of its JSON (the bench plays the users; a
     * typed client's serializing and reading back every answer was CPU taken from the agent measured beside it).
     * {@code created} gets each name with the {@link System#nanoTime} its create returned at.
     */
    void run(HttpClient http, URI server, Map<String, Long> created) throws Exception {
        URI collection = server.resolve("/apis/drover.dev/v1alpha1/namespaces/default/allocations");
        String template = JSON.writeValueAsString(allocation("NAME-PLACEHOLDER"));
        try (ExecutorService pool = Executors.newFixedThreadPool(16)) {
            List<Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < options.allocs(); i++) {
                String name = "bench-" + i;
                String body = template.replace("NAME-PLACEHOLDER", name);
                sent.add(pool.submit(() -> {
                    HttpResponse<String> r = http.send(
                            HttpRequest.newBuilder(collection)
                                    .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() != 201) {
                        throw new IOException("creating " + name + ": HTTP " + r.statusCode() + " " + r.body());
                    }
                    created.put(name, System.nanoTime());
                    return null;
                }));
            }
            for (var f : sent) {
                f.get();
            }
        }
    }

    private Allocation allocation(String name) {
        Allocation a = new Allocation();
        a.setMetadata(
                new ObjectMetaBuilder().withName(name).withNamespace("default").build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName(node);
        List<Task> list = new ArrayList<>();
        for (int t = 0; t < options.tasks(); t++) {
            Task task = new Task();
            task.setName("task-" + t);
            if (options.rawExec()) {
                task.setDriver(BenchOptions.RAW_EXEC);
                task.setConfig(Map.of("command", "/bin/sleep", "args", List.of("3600")));
            } else if (options.oci()) {
                task.setDriver(BenchOptions.OCI);
                task.setConfig(Map.of("image", options.image(), "command", "/bin/sleep", "args", List.of("3600")));
            } else {
                task.setDriver(BenchOptions.MOCK);
                task.setConfig(Map.of("runFor", "24h"));
            }
            task.setResources(NodeSharingLoad.taskResources(options));
            if (checks != null) {
                Check check = new Check("http", CheckType.HTTP);
                check.setPort(new io.fabric8.kubernetes.api.model.IntOrString(checks.port()));
                check.setPath(CheckTarget.PATH);
                check.setInterval("10s");
                task.setChecks(List.of(check));
            }
            list.add(task);
        }
        spec.setTasks(list);
        if (options.bridge()) {
            spec.setNetwork(new Network(NetworkMode.BRIDGE, List.of(new Port("http", null, null))));
        }
        a.setSpec(spec);
        return a;
    }
}
