package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.APIService;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
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
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

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

    @Test
    void theGeneratedSecretKeepsItsCaAndSaysForWhichNamesAndHowLongSoAnUpgradeCanKeepIt() throws Exception {
        Secret tls = rendered.gateway(Secret.class);
        X509Certificate ca = certificate(tls.getData().get("ca.crt"));
        assertThat(ca)
                .isEqualTo(
                        certificate(rendered.gateway(APIService.class).getSpec().getCaBundle()));
        assertThat(tls.getMetadata().getAnnotations())
                .containsEntry(
                        "drover.dev/tls-names",
                        NAME + "." + DroverChart.NAMESPACE + ".svc," + NAME + "." + DroverChart.NAMESPACE
                                + ".svc.cluster.local");
        long notAfter = Long.parseLong(tls.getMetadata().getAnnotations().get("drover.dev/tls-not-after"));
        assertThat(notAfter)
                .as("the serving certificate's own end, to the minute")
                .isCloseTo(
                        certificate(tls.getData().get("tls.crt")).getNotAfter().getTime() / 1000,
                        org.assertj.core.data.Offset.offset(120L));
    }

    @Test
    void anExistingSecretIsUsedAsItIsAndNothingIsGenerated() throws Exception {
        String caPem = new String(
                Base64.getDecoder()
                        .decode(rendered.gateway(APIService.class).getSpec().getCaBundle()),
                StandardCharsets.US_ASCII);
        Rendered own = DroverChart.render(
                ValueSet.DEFAULTS,
                Map.of("gateway.tls.existingSecret", "my-gateway-tls", "gateway.tls.caBundle", caPem));
        assertThat(own.all(Secret.class)).as("no Secret rendered").isEmpty();
        assertThat(own.objects()).noneMatch(o -> o.getApiVersion().startsWith("cert-manager.io"));
        PodSpec pod = own.gateway(Deployment.class).getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes())
                .filteredOn(v -> v.getSecret() != null)
                .singleElement()
                .satisfies(v -> assertThat(v.getSecret().getSecretName()).isEqualTo("my-gateway-tls"));
        assertThat(certificate(own.gateway(APIService.class).getSpec().getCaBundle()))
                .isEqualTo(
                        certificate(rendered.gateway(APIService.class).getSpec().getCaBundle()));
        assertThat(own.gateway(ConfigMap.class).getData().get("ca.crt").strip()).isEqualTo(caPem.strip());
        Map<String, Object> sets =
                Map.of("gateway.tls.existingSecret", "my-gateway-tls", "gateway.tls.caBundle", caPem);
        assertThat(DroverChart.template(ValueSet.DEFAULTS, sets))
                .as("rendered twice alike: nothing is made at render")
                .isEqualTo(DroverChart.template(ValueSet.DEFAULTS, sets));
    }

    @Test
    void certManagerIssuesBothCertificatesAndInjectsTheCaIntoTheApiService() {
        Rendered managed = DroverChart.render(ValueSet.DEFAULTS, Map.of("gateway.tls.certManager.enabled", true));
        assertThat(managed.all(Secret.class)).as("no key made by the chart").isEmpty();
        APIService api = managed.gateway(APIService.class);
        assertThat(api.getSpec().getCaBundle()).isNull();
        assertThat(api.getMetadata().getAnnotations())
                .containsEntry("cert-manager.io/inject-ca-from", DroverChart.NAMESPACE + "/" + NAME + "-tls");
        List<GenericKubernetesResource> certificates = managed.all(GenericKubernetesResource.class).stream()
                .filter(r -> "Certificate".equals(r.getKind()))
                .toList();
        assertThat(certificates)
                .extracting(c -> c.getMetadata().getName())
                .containsExactlyInAnyOrder(NAME + "-ca", NAME + "-tls", NAME + "-client");
        GenericKubernetesResource serving = certificates.stream()
                .filter(c -> (NAME + "-tls").equals(c.getMetadata().getName()))
                .findFirst()
                .orElseThrow();
        assertThat(serving.get("spec", "dnsNames").toString()).contains(NAME + "." + DroverChart.NAMESPACE + ".svc");
        assertThat(serving.get("spec", "issuerRef", "name").toString()).isEqualTo(NAME + "-ca");
        assertThat(managed.all(GenericKubernetesResource.class).stream()
                        .filter(r -> "Issuer".equals(r.getKind()))
                        .map(r -> r.getMetadata().getName()))
                .containsExactlyInAnyOrder(NAME + "-selfsigned", NAME + "-ca");
        var tls = managed.gateway(Deployment.class).getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> "tls".equals(v.getName()))
                .findFirst()
                .orElseThrow()
                .getProjected();
        assertThat(tls.getDefaultMode()).isEqualTo(0440);
        assertThat(tls.getSources())
                .flatExtracting(s -> s.getSecret().getItems())
                .extracting(i -> s(i.getKey(), i.getPath()))
                .containsExactly("tls.crt>tls.crt", "tls.key>tls.key", "tls.crt>client.crt", "tls.key>client.key");
        assertThat(managed.gateway(ConfigMap.class).getData())
                .as("the CA is not known before cert-manager issues it (no cluster to look it up in)")
                .isEmpty();

        assertThat(DroverChart.helm()
                        .install()
                        .withName(DroverChart.RELEASE)
                        .withNamespace(DroverChart.NAMESPACE)
                        .withKubeVersion(DroverChart.KUBE_VERSION)
                        .clientOnly()
                        .dryRun()
                        .set("gateway.tls.certManager.enabled", true)
                        .call()
                        .getOutput())
                .as("the install's notes say how the agents come to trust the gateway")
                .contains("ConfigMap " + NAME + "-ca, which the next upgrade does")
                .contains("get certificate " + NAME + "-client` is Ready, run helm upgrade");

        Rendered external = DroverChart.render(
                ValueSet.DEFAULTS,
                Map.of(
                        "gateway.tls.certManager.enabled", true,
                        "gateway.tls.certManager.issuerRef.name", "corp-ca",
                        "gateway.tls.certManager.issuerRef.kind", "ClusterIssuer",
                        "gateway.tls.caBundle", "-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n"));
        assertThat(external.all(GenericKubernetesResource.class))
                .noneMatch(r -> "Issuer".equals(r.getKind()))
                .filteredOn(r -> "Certificate".equals(r.getKind()))
                .hasSize(2)
                .allSatisfy(c -> assertThat(c.get("spec", "issuerRef", "kind").toString())
                        .isEqualTo("ClusterIssuer"));
        assertThat(external.gateway(ConfigMap.class).getData().get("ca.crt")).startsWith("-----BEGIN CERTIFICATE-----");
    }

    @Test
    void anExistingSecretAndCertManagerTogetherAreRefused() {
        assertThatThrownBy(() -> DroverChart.template(
                        ValueSet.DEFAULTS,
                        Map.of("gateway.tls.existingSecret", "x", "gateway.tls.certManager.enabled", true)))
                .hasMessageContaining("gateway.tls.existingSecret and gateway.tls.certManager.enabled are both set");
    }

    private static String s(String key, String path) {
        return key + ">" + path;
    }

    /** Real helm's template, whose lookup finds nothing (helm-java's asks a cluster, and there is none here). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.drover.e2e.chart.ChartLintTest#helmBinaries")
    void anExistingSecretWithoutACaThatHelmCanReadIsRefused(Path helm) throws Exception {
        assumeTrue(helm != null, "no Helm CLI: set DROVER_HELM_BINARIES or put helm on PATH");
        String out = ChartLintTest.run(
                helm,
                "template",
                "drover",
                "charts/drover",
                "--kube-version",
                DroverChart.KUBE_VERSION,
                "--set",
                "gateway.tls.existingSecret=not-there");
        assertThat(out)
                .contains("gateway.tls.existingSecret names Secret not-there")
                .contains("give gateway.tls.caBundle");
    }
}
