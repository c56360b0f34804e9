package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.APIService;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The gateway's objects: served through the API server with a certificate it trusts, least rights, no root. */
class ChartGatewayTest {

    static final String NAME = "drover-gateway";

    final Rendered rendered = DroverChart.render(ValueSet.DEFAULTS);

    static X509Certificate certificate(String base64Pem) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(
                        new ByteArrayInputStream(Base64.getDecoder().decode(base64Pem)));
    }

    @Test
    void theApiServiceTrustsTheCaThatSignedTheServiceCertificate() throws Exception {
        APIService api = rendered.gateway(APIService.class);
        assertThat(api.getMetadata().getName()).isEqualTo("v1alpha1.agent.drover.dev");
        assertThat(api.getSpec().getGroup()).isEqualTo("agent.drover.dev");
        assertThat(api.getSpec().getVersion()).isEqualTo("v1alpha1");
        assertThat(api.getSpec().getService().getName()).isEqualTo(NAME);
        assertThat(api.getSpec().getService().getNamespace()).isEqualTo(DroverChart.NAMESPACE);
        assertThat(api.getSpec().getService().getPort()).isEqualTo(443);
        X509Certificate ca = certificate(api.getSpec().getCaBundle());
        Secret tls = rendered.gateway(Secret.class);
        assertThat(tls.getType()).isEqualTo("kubernetes.io/tls");
        X509Certificate serving = certificate(tls.getData().get("tls.crt"));
        serving.verify(ca.getPublicKey());
        List<String> names = new ArrayList<>();
        serving.getSubjectAlternativeNames().forEach(n -> names.add(String.valueOf(n.get(1))));
        assertThat(names).contains(NAME + "." + DroverChart.NAMESPACE + ".svc");
        assertThat(new String(Base64.getDecoder().decode(tls.getData().get("tls.key"))))
                .contains("PRIVATE KEY");
        Service service = rendered.gateway(Service.class);
        assertThat(service.getMetadata().getName()).isEqualTo(NAME);
        assertThat(service.getSpec().getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getPort()).isEqualTo(443);
            assertThat(p.getTargetPort().getStrVal()).isEqualTo("https");
        });
    }

    @Test
    void theGatewayRunsAsNobodyWithItsOwnAgentAudienceToken() {
        Deployment deployment = rendered.gateway(Deployment.class);
        assertThat(deployment.getSpec().getReplicas()).isEqualTo(2);
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        assertThat(pod.getServiceAccountName())
                .isEqualTo(rendered.gateway(ServiceAccount.class).getMetadata().getName());
        assertThat(pod.getSecurityContext().getRunAsUser()).isEqualTo(65532L);
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        // Secret files are root's: only their group (the pod's fsGroup) lets uid 65532 read the key, and no one else
        assertThat(pod.getSecurityContext().getFsGroup()).isEqualTo(65532L);
        var tls = pod.getVolumes().stream()
                .filter(v -> v.getSecret() != null)
                .findFirst()
                .orElseThrow()
                .getSecret();
        assertThat(tls.getDefaultMode()).isEqualTo(0440);
        assertThat(pod.getAffinity().getPodAntiAffinity()).isNotNull();
        Container gateway = pod.getContainers().getFirst();
        assertThat(gateway.getArgs()).startsWith("gateway");
        assertThat(gateway.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(gateway.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(gateway.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(gateway.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/livez");
        // the probes use the health checks' own port, which a flood of the API's port cannot fill
        assertThat(gateway.getReadinessProbe().getHttpGet().getPort().getStrVal())
                .isEqualTo("health");
        assertThat(gateway.getLivenessProbe().getHttpGet().getPort().getStrVal())
                .isEqualTo("health");
        assertThat(gateway.getPorts()).anySatisfy(port -> {
            assertThat(port.getName()).isEqualTo("health");
            assertThat(port.getContainerPort()).isEqualTo(8444);
        });
        assertThat(gateway.getArgs()).containsSubsequence("--health-port", "8444");
        var token = pod.getVolumes().stream()
                .filter(v -> v.getProjected() != null)
                .findFirst()
                .orElseThrow()
                .getProjected()
                .getSources()
                .getFirst()
                .getServiceAccountToken();
        assertThat(token.getAudience()).isEqualTo("drover.dev/agent");
        assertThat(gateway.getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/var/run/secrets/drover.dev/peer"));
        PodDisruptionBudget pdb = rendered.gateway(PodDisruptionBudget.class);
        assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
    }

    @Test
    void theGatewayMayHaveWhatItForwardsAndReviewRightsButNothingElse() {
        List<String> grants = new ArrayList<>();
        for (PolicyRule rule : rendered.gateway(ClusterRole.class).getRules()) {
            for (String group : rule.getApiGroups()) {
                for (String resource : rule.getResources()) {
                    grants.add(group + " " + resource + " " + rule.getVerbs());
                }
            }
        }
        assertThat(grants)
                .containsExactlyInAnyOrder(
                        "agent.drover.dev allocations/log [get]",
                        "agent.drover.dev allocations/stats [get]",
                        "agent.drover.dev allocations/snapshot [get]",
                        "agent.drover.dev allocations/signal [create]",
                        "agent.drover.dev allocations/exec [create]",
                        "drover.dev allocations [get]",
                        " nodes [get]",
                        "authorization.k8s.io subjectaccessreviews [create]");
        assertThat(rendered.gateway(ClusterRoleBinding.class).getSubjects())
                .singleElement()
                .satisfies(s -> assertThat(s.getName()).isEqualTo(NAME));
        RoleBinding reader = rendered.gateway(RoleBinding.class);
        assertThat(reader.getMetadata().getNamespace()).isEqualTo("kube-system");
        assertThat(reader.getRoleRef().getName()).isEqualTo("extension-apiserver-authentication-reader");
    }

    @Test
    void agentsTrustTheGatewaysClientCertificateThroughThePublishedCaOnly() throws Exception {
        Secret tls = rendered.gateway(Secret.class);
        X509Certificate client = certificate(tls.getData().get("client.crt"));
        assertThat(new String(Base64.getDecoder().decode(tls.getData().get("client.key"))))
                .contains("PRIVATE KEY");
        assertThat(client.getExtendedKeyUsage()).contains("1.3.6.1.5.5.7.3.2"); // client authentication
        assertThat(client.getSubjectX500Principal().getName()).isEqualTo("CN=drover-gateway");
        ConfigMap published = rendered.gateway(ConfigMap.class);
        assertThat(published.getMetadata().getName()).isEqualTo(NAME + "-ca");
        String pem = published.getData().get("ca.crt");
        assertThat(published.getData()).containsOnlyKeys("ca.crt");
        assertThat(pem).doesNotContain("PRIVATE KEY");
        X509Certificate ca = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
        client.verify(ca.getPublicKey());
        assertThat(ca)
                .isEqualTo(
                        certificate(rendered.gateway(APIService.class).getSpec().getCaBundle()));
        assertThat(rendered.gateway(Deployment.class)
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .getFirst()
                        .getArgs())
                .containsSubsequence("--tls-client-cert-file", "/etc/drover/gateway-tls/client.crt")
                .containsSubsequence("--tls-client-key-file", "/etc/drover/gateway-tls/client.key");

        assertThat(rendered.env())
                .containsEntry(
                        "DROVER_GATEWAY_USER",
                        "system:serviceaccount:" + DroverChart.NAMESPACE + ":"
                                + rendered.gateway(ServiceAccount.class)
                                        .getMetadata()
                                        .getName());
        Volume volume = rendered.pod().getVolumes().stream()
                .filter(v -> v.getConfigMap() != null
                        && (NAME + "-ca").equals(v.getConfigMap().getName()))
                .findFirst()
                .orElseThrow();
        assertThat(rendered.agent().getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo(volume.getName());
            assertThat(m.getMountPath()).isEqualTo("/etc/drover-gateway-ca"); // the agent's default
            assertThat(m.getReadOnly()).isTrue();
        });
    }

    @Test
    void theGatewayCanBeLeftOut() {
        Rendered without = DroverChart.render(ValueSet.DEFAULTS, Map.of("gateway.enabled", false));
        assertThat(without.all(APIService.class)).isEmpty();
        assertThat(without.objects()).noneMatch(Rendered::isGateway);
        assertThat(without.env()).doesNotContainKey("DROVER_GATEWAY_USER");
        assertThat(without.pod().getVolumes())
                .noneMatch(v ->
                        v.getConfigMap() != null && v.getConfigMap().getName().endsWith("-gateway-ca"));
    }
}
