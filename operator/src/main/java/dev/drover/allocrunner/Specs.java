package dev.drover.allocrunner;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.Jackson;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** Copies of allocations, with plain Jackson (no Kubernetes client here). */
final class Specs {

    private static final ObjectMapper JSON = Jackson.builder(Jackson.factory())
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private Specs() {}

    /** The allocation's {@code metadata.generation}; 0 when it has none (a spec not from the API server). */
    static long generation(Allocation a) {
        Long generation = a.getMetadata().getGeneration();
        return generation == null ? 0 : generation;
    }

    /** The annotation {@code kubectl apply} keeps a whole copy of the object in. */
    static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

    /**
     * The runner's snapshot of an allocation: a deep copy (never sharing objects with the caller's) of its spec
     * and identifying metadata. Status, managed fields and kubectl's last-applied copy are left out: the runner
     * never reads them, and it would keep them, and store them, once more per allocation.
     */
    static Allocation copy(Allocation a) {
        Allocation snapshot = new Allocation();
        ObjectMeta m = a.getMetadata();
        Map<String, String> annotations = m.getAnnotations() == null ? null : new LinkedHashMap<>(m.getAnnotations());
        if (annotations != null) {
            annotations.remove(LAST_APPLIED);
        }
        snapshot.setMetadata(new ObjectMetaBuilder()
                .withName(m.getName())
                .withNamespace(m.getNamespace())
                .withUid(m.getUid())
                .withGeneration(m.getGeneration())
                .withLabels(m.getLabels())
                .withAnnotations(annotations == null || annotations.isEmpty() ? null : annotations)
                .build());
        snapshot.setSpec(a.getSpec());
        try {
            return JSON.readValue(JSON.writeValueAsBytes(snapshot), Allocation.class);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "cannot copy allocation " + a.getMetadata().getName(), e);
        }
    }
}
