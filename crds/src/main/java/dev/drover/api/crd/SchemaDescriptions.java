package dev.drover.api.crd;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.util.Map;

/**
 * The descriptions fabric8 cannot take from the model's {@code @JsonPropertyDescription}s: the resource's, its
 * {@code spec}'s and {@code status}'s (from their classes' {@link JsonClassDescription}), and the fields of the
 * standard Kubernetes {@code Condition} (fabric8's class carries none). {@code kubectl explain} shows them.
 */
final class SchemaDescriptions implements CrdStep {

    /** As Kubernetes' metav1.Condition describes its fields, shortened. */
    static final Map<String, String> CONDITION_FIELDS = Map.of(
            "type", "The condition's type, e.g. Ready.",
            "status", "True, False or Unknown.",
            "reason", "A CamelCase word saying why the condition has its status, e.g. ChecksPassing.",
            "message", "A sentence for humans saying why the condition has its status.",
            "lastTransitionTime", "When the status last changed (RFC 3339).",
            "observedGeneration", "The metadata.generation the condition was set for.");

    @Override
    public void apply(CustomResourceDefinition crd) {
        for (CustomResourceDefinitionVersion version : crd.getSpec().getVersions()) {
            JSONSchemaProps root = version.getSchema().getOpenAPIV3Schema();
            root.setDescription(describe(Allocation.class));
            JSONSchemaProps spec = root.getProperties().get("spec");
            JSONSchemaProps status = root.getProperties().get("status");
            spec.setDescription(describe(AllocationSpec.class));
            status.setDescription(describe(AllocationStatus.class));
            JSONSchemaProps condition =
                    status.getProperties().get("conditions").getItems().getSchema();
            condition.getProperties().forEach((name, field) -> {
                if (field.getDescription() == null) {
                    field.setDescription(CONDITION_FIELDS.get(name));
                }
            });
        }
    }

    private static String describe(Class<?> type) {
        JsonClassDescription d = type.getAnnotation(JsonClassDescription.class);
        if (d == null) {
            throw new IllegalStateException(type.getName() + " needs a @JsonClassDescription for the CRD's schema");
        }
        return d.value();
    }
}
