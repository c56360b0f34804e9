package dev.drover.e2e.chart;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The objects one {@code helm template} produced, with lookups the tests share. */
record Rendered(List<HasMetadata> objects) {

    <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** The one object of {@code type} that is part of the agent (the gateway's are left out: {@link #gateway}). */
    <T extends HasMetadata> T one(Class<T> type) {
        List<T> found = all(type).stream().filter(o -> !isGateway(o)).toList();
        if (found.size() != 1) {
            throw new AssertionError(
                    "expected one " + type.getSimpleName() + ", rendered " + found.size() + ": " + kinds());
        }
        return found.getFirst();
    }

    /** The gateway's one object of {@code type}. */
    <T extends HasMetadata> T gateway(Class<T> type) {
        List<T> found = all(type).stream().filter(Rendered::isGateway).toList();
        if (found.size() != 1) {
            throw new AssertionError("expected one gateway " + type.getSimpleName() + ", rendered " + found.size());
        }
        return found.getFirst();
    }

    static boolean isGateway(HasMetadata o) {
        return o.getMetadata().getLabels() != null
                && "gateway".equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"));
    }

    Optional<GenericKubernetesResource> generic(String kind) {
        return all(GenericKubernetesResource.class).stream()
                .filter(r -> kind.equals(r.getKind()))
                .findFirst();
    }

    Optional<ConfigMap> configMap(String name) {
        return all(ConfigMap.class).stream()
                .filter(c -> name.equals(c.getMetadata().getName()))
                .findFirst();
    }

    DaemonSet daemonSet() {
        return one(DaemonSet.class);
    }

    PodSpec pod() {
        return daemonSet().getSpec().getTemplate().getSpec();
    }

    Container agent() {
        List<Container> containers = pod().getContainers();
        if (containers.size() != 1 || !"agent".equals(containers.getFirst().getName())) {
            throw new AssertionError("expected one container named agent, got " + containers);
        }
        return containers.getFirst();
    }

    /** The agent container's plain (value) environment variables. */
    Map<String, String> env() {
        return agent().getEnv().stream()
                .filter(e -> e.getValueFrom() == null)
                .collect(Collectors.toMap(EnvVar::getName, e -> e.getValue() == null ? "" : e.getValue()));
    }

    Optional<EnvVar> envVar(String name) {
        return agent().getEnv().stream().filter(e -> name.equals(e.getName())).findFirst();
    }

    List<String> kinds() {
        return objects.stream()
                .map(o -> o.getKind() + "/" + o.getMetadata().getName())
                .toList();
    }
}
