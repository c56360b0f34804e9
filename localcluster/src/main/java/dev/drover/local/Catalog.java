package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every resource type the server serves: a fixed set of built-ins and whatever
 * CRDs are stored. Rebuilt lazily after a CRD changes, so discovery and
 * validation follow CRDs applied at any time.
 */
final class Catalog {

    static final ResourceType NAMESPACES = ResourceType.builtIn("", "v1", "namespaces", "Namespace", false, "ns");
    static final ResourceType NODES = ResourceType.builtIn("", "v1", "nodes", "Node", false, "no");
    static final ResourceType CRDS = ResourceType.builtIn(
                    "apiextensions.k8s.io",
                    "v1",
                    "customresourcedefinitions",
                    "CustomResourceDefinition",
                    false,
                    "crd",
                    "crds")
            .withStatusSubresource();

    static final ResourceType TOKEN_REVIEWS =
            ResourceType.builtIn("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", false);
    static final ResourceType SELF_SUBJECT_REVIEWS =
            ResourceType.builtIn("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", false);
    static final ResourceType SUBJECT_ACCESS_REVIEWS =
            ResourceType.builtIn("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", false);
    static final ResourceType SELF_SUBJECT_ACCESS_REVIEWS = ResourceType.builtIn(
            "authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", false);
    static final ResourceType SELF_SUBJECT_RULES_REVIEWS = ResourceType.builtIn(
            "authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", false);
    static final ResourceType LOCAL_SUBJECT_ACCESS_REVIEWS = ResourceType.builtIn(
            "authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", true);

    /** Virtual resources that only answer a POST ({@link Review}); nothing of them is stored. */
    static final List<ResourceType> REVIEWS = List.of(
            TOKEN_REVIEWS,
            SELF_SUBJECT_REVIEWS,
            SUBJECT_ACCESS_REVIEWS,
            SELF_SUBJECT_ACCESS_REVIEWS,
            SELF_SUBJECT_RULES_REVIEWS,
            LOCAL_SUBJECT_ACCESS_REVIEWS);

    static final ResourceType SERVICE_ACCOUNTS =
            ResourceType.builtIn("", "v1", "serviceaccounts", "ServiceAccount", true, "sa");
    static final ResourceType PODS = ResourceType.builtIn("", "v1", "pods", "Pod", true, "po")
            .inCategoryAll()
            .withStatusSubresource();
    static final ResourceType SECRETS = ResourceType.builtIn("", "v1", "secrets", "Secret", true);
    static final ResourceType SERVICES =
            ResourceType.builtIn("", "v1", "services", "Service", true, "svc").inCategoryAll();
    static final ResourceType CONFIG_MAPS = ResourceType.builtIn("", "v1", "configmaps", "ConfigMap", true, "cm");

    static final List<ResourceType> BUILT_IN = List.of(
            NAMESPACES,
            NODES,
            SERVICE_ACCOUNTS,
            PODS,
            SECRETS,
            SERVICES,
            CONFIG_MAPS,
            Aggregator.API_SERVICES,
            ResourceType.builtIn("", "v1", "events", "Event", true, "ev"),
            ResourceType.builtIn("apps", "v1", "daemonsets", "DaemonSet", true, "ds")
                    .inCategoryAll(),
            ResourceType.builtIn("apps", "v1", "deployments", "Deployment", true, "deploy")
                    .inCategoryAll(),
            AdmissionPolicies.POLICIES,
            AdmissionPolicies.BINDINGS,
            Rbac.CLUSTER_ROLES,
            Rbac.CLUSTER_ROLE_BINDINGS,
            Rbac.ROLES,
            Rbac.ROLE_BINDINGS,
            CRDS,
            ResourceType.builtIn("coordination.k8s.io", "v1", "leases", "Lease", true),
            ResourceType.builtIn("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", true),
            ResourceType.builtIn("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true, "pdb"),
            ResourceType.builtIn("monitoring.coreos.com", "v1", "servicemonitors", "ServiceMonitor", true));

    private static final ObjectMapper JSON = NestingDepth.mapper();

    private final ObjectStore store;
    private final KubeVersion version;
    private volatile Map<String, ResourceType> types;

    Catalog(ObjectStore store, KubeVersion version) {
        this.store = store;
        this.version = version;
    }

    /** Forget the CRDs read so far; the next lookup reads them again. */
    void invalidate() {
        types = null;
    }

    ResourceType find(String group, String version, String plural) {
        return all().get(ResourceType.key(group, version, plural));
    }

    Collection<ResourceType> types() {
        return all().values();
    }

    /** Group → versions served, core group first, in a stable order. */
    Map<String, List<String>> groups() {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (ResourceType t : types()) {
            List<String> versions = out.computeIfAbsent(t.group(), g -> new ArrayList<>());
            if (!versions.contains(t.version())) {
                versions.add(t.version());
            }
        }
        return out;
    }

    private Map<String, ResourceType> all() {
        Map<String, ResourceType> current = types;
        if (current == null) {
            current = load();
            types = current;
        }
        return current;
    }

    private Map<String, ResourceType> load() {
        Map<String, ResourceType> out = new LinkedHashMap<>();
        for (ResourceType t : BUILT_IN) {
            out.put(t.key(), t);
        }
        if (version.mutatingAdmissionPolicies()) {
            out.put(MutatingPolicies.POLICIES.key(), MutatingPolicies.POLICIES);
            out.put(MutatingPolicies.BINDINGS.key(), MutatingPolicies.BINDINGS);
        }
        for (ResourceType t : REVIEWS) {
            out.put(t.key(), t);
        }
        for (JsonNode stored : store.list(CRDS, null).items()) {
            CustomResourceDefinition crd = JSON.convertValue(stored, CustomResourceDefinition.class);
            var names = crd.getSpec().getNames();
            for (CustomResourceDefinitionVersion v : crd.getSpec().getVersions()) {
                if (Boolean.FALSE.equals(v.getServed())) {
                    continue;
                }
                JsonNode schema = v.getSchema() == null
                        ? null
                        : JSON.valueToTree(v.getSchema().getOpenAPIV3Schema());
                List<JsonNode> columns = v.getAdditionalPrinterColumns() == null
                        ? List.of()
                        : v.getAdditionalPrinterColumns().stream()
                                .map(c -> JSON.<JsonNode>valueToTree(c))
                                .toList();
                List<String> selectable = v.getSelectableFields() == null
                        ? List.of()
                        : v.getSelectableFields().stream()
                                .map(f -> f.getJsonPath().replaceFirst("^\\.", ""))
                                .toList();
                ResourceType t = new ResourceType(
                        crd.getSpec().getGroup(),
                        v.getName(),
                        names.getPlural(),
                        names.getSingular() == null
                                ? names.getKind().toLowerCase(java.util.Locale.ROOT)
                                : names.getSingular(),
                        names.getKind(),
                        "Namespaced".equals(crd.getSpec().getScope()),
                        names.getShortNames() == null ? List.of() : names.getShortNames(),
                        names.getCategories() == null ? List.of() : names.getCategories(),
                        v.getSubresources() != null && v.getSubresources().getStatus() != null,
                        schema,
                        columns,
                        selectable);
                out.put(t.key(), t);
            }
        }
        return out;
    }
}
