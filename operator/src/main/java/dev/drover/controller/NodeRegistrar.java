package dev.drover.controller;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.concurrent.Worker;
import dev.drover.deviceplugin.AttributeValue;
import dev.drover.devices.DeviceManager;
import dev.drover.state.Jackson;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Advertises the node's devices on its Node: capacity and allocatable
 * {@code drover.dev/<vendor>-<type>} (healthy instances; 0 while their plugin
 * is down) and the labels {@code drover.dev/gpu.product}, {@code .memory},
 * {@code .count} and {@code .driver}; and how clients reach the agent's API
 * (annotations {@code drover.dev/agent-api-port} and
 * {@code drover.dev/agent-certificate-sha256}). One merge patch of
 * {@code nodes/status} (the RBAC the chart grants) whenever what it would
 * write changes; a failed patch is tried again at the next check.
 */
public final class NodeRegistrar implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeRegistrar.class);
    private static final ObjectMapper JSON = new ObjectMapper(Jackson.factory());
    static final String PREFIX = "drover.dev/";

    private final KubernetesClient client;
    private final String node;
    private final DeviceManager devices;
    private volatile Map<String, String> annotations;
    private final Worker worker;
    private volatile String written;

    public NodeRegistrar(KubernetesClient client, String node, DeviceManager devices, Duration interval) {
        this(client, node, devices, Map.of(), interval);
    }

    /**
     * @param devices     the node's devices, or null when the agent runs no device plugins
     * @param annotations set on the Node as well (how clients reach the agent's API)
     */
    public NodeRegistrar(
            KubernetesClient client,
            String node,
            DeviceManager devices,
            Map<String, String> annotations,
            Duration interval) {
        this.client = client;
        this.node = node;
        this.devices = devices;
        this.annotations = Map.copyOf(annotations);
        this.worker = Worker.startVirtual("drover-node-registrar", self -> {
            register();
            Thread.sleep(interval);
        });
    }

    /** Sets {@code changed} annotations (a renewed certificate's fingerprint) and writes them now. */
    public void annotate(Map<String, String> changed) {
        Map<String, String> merged = new java.util.LinkedHashMap<>(annotations);
        merged.putAll(changed);
        annotations = Map.copyOf(merged);
        register();
    }

    /** Patches the Node if its device view or annotations changed; returns whether it wrote. */
    synchronized boolean register() {
        String patch = devices == null ? annotationsPatch(annotations) : patch(devices.devices(), annotations);
        if (patch.equals(written)) {
            return false;
        }
        try {
            client.nodes().withName(node).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), patch);
            written = patch;
            LOG.info("registered node {}: {}", node, patch);
            return true;
        } catch (RuntimeException e) {
            LOG.warn("cannot register node {} (will retry): {}", node, e.getMessage());
            return false;
        }
    }

    static String patch(Map<String, DeviceManager.Device> devices) {
        return patch(devices, Map.of());
    }

    /** The merge patch of {@code annotations} alone, for an agent without device plugins. */
    static String annotationsPatch(Map<String, String> annotations) {
        ObjectNode patch = JSON.createObjectNode();
        putAnnotations(patch.putObject("metadata"), annotations);
        return patch.toString();
    }

    private static void putAnnotations(ObjectNode metadata, Map<String, String> annotations) {
        ObjectNode values = metadata.putObject("annotations");
        new TreeMap<>(annotations).forEach(values::put);
    }

    /** The merge patch for {@code devices}: capacity, allocatable and labels (and annotations), in a stable order. */
    static String patch(Map<String, DeviceManager.Device> devices, Map<String, String> annotations) {
        Map<String, Integer> healthy = new TreeMap<>();
        Map<String, String> labels = new TreeMap<>();
        TreeSet<String> products = new TreeSet<>();
        TreeSet<String> memories = new TreeSet<>();
        TreeSet<String> drivers = new TreeSet<>();
        int gpus = 0;
        for (DeviceManager.Device d : devices.values()) {
            String resource = PREFIX
                    + (d.group().vendor() + "-" + d.group().type())
                            .toLowerCase(Locale.ROOT)
                            .replaceAll("[^a-z0-9.-]", "-");
            healthy.merge(resource, d.healthy() ? 1 : 0, Integer::sum);
            if (d.group().type().equals("gpu")) {
                gpus++;
                products.add(labelValue(d.group().model()));
                attribute(d.group().attributes(), "memory")
                        .ifPresent(v -> memories.add(labelValue(v.replace(" ", ""))));
                attribute(d.group().attributes(), "driver_version").ifPresent(v -> drivers.add(labelValue(v)));
            }
        }
        if (gpus > 0) {
            labels.put(PREFIX + "gpu.product", String.join("_", products));
            labels.put(PREFIX + "gpu.count", Integer.toString(gpus));
            if (!memories.isEmpty()) {
                labels.put(PREFIX + "gpu.memory", String.join("_", memories));
            }
            if (!drivers.isEmpty()) {
                labels.put(PREFIX + "gpu.driver", String.join("_", drivers));
            }
        }
        ObjectNode patch = JSON.createObjectNode();
        ObjectNode metadata = patch.putObject("metadata");
        ObjectNode labelValues = metadata.putObject("labels");
        labels.forEach(labelValues::put);
        if (!annotations.isEmpty()) {
            putAnnotations(metadata, annotations);
        }
        ObjectNode status = patch.putObject("status");
        ObjectNode capacity = status.putObject("capacity");
        healthy.forEach((resource, count) -> capacity.put(resource, Integer.toString(count)));
        status.set("allocatable", capacity.deepCopy());
        return patch.toString();
    }

    private static java.util.Optional<String> attribute(Map<String, AttributeValue> attributes, String name) {
        AttributeValue v = attributes.get(name);
        return v == null ? java.util.Optional.empty() : java.util.Optional.of(v.display());
    }

    /** A label value: at most 63 of [A-Za-z0-9._-], starting and ending alphanumeric. */
    static String labelValue(String raw) {
        String v = raw.replaceAll("[^A-Za-z0-9._-]+", "-").replaceAll("^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "");
        return v.length() > 63 ? v.substring(0, 63).replaceAll("[^A-Za-z0-9]+$", "") : v;
    }

    @Override
    public void close() {
        worker.close();
    }
}
