package dev.drover.local;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The agent's Pod on a node, as the DaemonSet controller creates it from the chart's DaemonSet: its pod template's
 * labels, annotations and spec, named {@code <daemonset>-} and five random characters, bound to the node ({@code
 * spec.nodeName}). The local kubelet then admits it. One per node: a Pod of the DaemonSet already bound to the node
 * is kept.
 */
final class AgentPods {

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
    private static final KubernetesSerialization YAML = new KubernetesSerialization();

    private AgentPods() {}

    /** The DaemonSet the chart rendered whose Pods run as {@code serviceAccount}. */
    static DaemonSet daemonSet(String rendered, String serviceAccount) {
        for (String document : DOCUMENT_SEPARATOR.split(rendered)) {
            if (document.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                continue;
            }
            HasMetadata object = YAML.unmarshal(document, HasMetadata.class);
            if (object instanceof DaemonSet ds
                    && serviceAccount.equals(
                            ds.getSpec().getTemplate().getSpec().getServiceAccountName())) {
                return ds;
            }
        }
        throw new IllegalStateException("the chart renders no DaemonSet whose Pods run as " + serviceAccount);
    }

    /** The DaemonSet's Pod on {@code node}: the one there, or a new one. */
    static AgentIdentity.AgentPod ensure(KubernetesClient admin, DaemonSet ds, String namespace, String node) {
        Map<String, String> selector = ds.getSpec().getSelector().getMatchLabels();
        for (Pod pod :
                admin.pods().inNamespace(namespace).withLabels(selector).list().getItems()) {
            if (node.equals(pod.getSpec().getNodeName()) && pod.getMetadata().getDeletionTimestamp() == null) {
                return of(pod, node);
            }
        }
        PodTemplateSpec template = ds.getSpec().getTemplate();
        PodSpec spec = YAML.clone(template.getSpec());
        spec.setNodeName(node);
        Pod pod = new PodBuilder()
                .withNewMetadata()
                .withGenerateName(ds.getMetadata().getName() + "-")
                .withNamespace(namespace)
                .withLabels(template.getMetadata().getLabels())
                .withAnnotations(template.getMetadata().getAnnotations())
                .endMetadata()
                .withSpec(spec)
                .build();
        return of(admin.pods().inNamespace(namespace).resource(pod).create(), node);
    }

    private static AgentIdentity.AgentPod of(Pod pod, String node) {
        return new AgentIdentity.AgentPod(
                pod.getMetadata().getName(),
                pod.getMetadata().getNamespace(),
                pod.getMetadata().getUid(),
                node);
    }
}
