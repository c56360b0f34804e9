package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * One kind of resource the server serves: built in, or defined by a CRD.
 *
 * @param schema        the openAPIV3Schema of a CRD version, null for built-ins (not validated)
 * @param printerColumns a CRD's additionalPrinterColumns, empty for built-ins
 */
record ResourceType(
        String group,
        String version,
        String plural,
        String singular,
        String kind,
        boolean namespaced,
        List<String> shortNames,
        List<String> categories,
        boolean statusSubresource,
        JsonNode schema,
        List<JsonNode> printerColumns,
        List<String> selectableFields) {

    String groupVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    String key() {
        return key(group, version, plural);
    }

    static String key(String group, String version, String plural) {
        return group + "/" + version + "/" + plural;
    }

    static ResourceType builtIn(
            String group, String version, String plural, String kind, boolean namespaced, String... shortNames) {
        String singular = kind.toLowerCase(java.util.Locale.ROOT);
        return new ResourceType(
                group,
                version,
                plural,
                singular,
                kind,
                namespaced,
                List.of(shortNames),
                List.of(),
                false,
                null,
                List.of(),
                List.of());
    }

    /** This type in the category {@code all}, as kube-apiserver lists its workload kinds for {@code kubectl get all}. */
    ResourceType inCategoryAll() {
        return new ResourceType(
                group,
                version,
                plural,
                singular,
                kind,
                namespaced,
                shortNames,
                List.of("all"),
                statusSubresource,
                schema,
                printerColumns,
                selectableFields);
    }

    /** This type with a {@code status} subresource, as a built-in whose status its controllers write. */
    ResourceType withStatusSubresource() {
        return new ResourceType(
                group,
                version,
                plural,
                singular,
                kind,
                namespaced,
                shortNames,
                categories,
                true,
                schema,
                printerColumns,
                selectableFields);
    }
}
