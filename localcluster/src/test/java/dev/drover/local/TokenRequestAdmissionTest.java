package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A token request passes validating admission as on kube-apiserver ({@code TokenREST.Create}): after it is
 * defaulted and validated, before the bound object is looked up or the lifetime is cut, as a TokenRequest on the
 * subresource {@code serviceaccounts/token}. A policy that denies every token request in namespace {@code probed}
 * says in its message what it saw.
 */
class TokenRequestAdmissionTest {

    static LocalApiServer server;
    static KubernetesClient admin;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("n1")));
        admin = server.client();
        for (String ns : List.of("probed", "other")) {
            admin.namespaces()
                    .resource(new NamespaceBuilder()
                            .withNewMetadata()
                            .withName(ns)
                            .endMetadata()
                            .build())
                    .create();
            admin.serviceAccounts()
                    .inNamespace(ns)
                    .resource(new ServiceAccountBuilder()
                            .withNewMetadata()
                            .withName("robot")
                            .endMetadata()
                            .build())
                    .create();
        }
        KubernetesSerialization yaml = new KubernetesSerialization();
        admin.resource(yaml.unmarshal("""
                        apiVersion: admissionregistration.k8s.io/v1
                        kind: ValidatingAdmissionPolicy
                        metadata: {name: probe}
                        spec:
                          failurePolicy: Fail
                          matchConstraints:
                            resourceRules:
                            - apiGroups: [""]
                              apiVersions: [v1]
                              operations: [CREATE]
                              resources: [serviceaccounts/token]
                          matchConditions:
                          - name: probed
                            expression: "request.namespace == 'probed'"
                          validations:
                          - expression: "false"
                            messageExpression: >-
                              request.kind.group + '/' + request.kind.version + ' ' + request.kind.kind
                              + ' ' + request.resource.resource + '/' + request.subResource + ' ' + request.operation
                              + ' name=' + request.name + ' old=' + string(oldObject == null)
                              + ' ns=' + namespaceObject.metadata.name
                              + ' object=' + object.kind + ' ' + object.metadata.name + '/' + object.metadata.namespace
                              + ' aud=' + object.spec.audiences.join(',')
                              + ' exp=' + string(object.spec.expirationSeconds)
                              + ' status=' + string(has(object.status) && has(object.status.token))
                        """, io.fabric8.kubernetes.api.model.HasMetadata.class))
                .create();
        admin.resource(yaml.unmarshal("""
                        apiVersion: admissionregistration.k8s.io/v1
                        kind: ValidatingAdmissionPolicyBinding
                        metadata: {name: probe}
                        spec: {policyName: probe, validationActions: [Deny]}
                        """, io.fabric8.kubernetes.api.model.HasMetadata.class))
                .create();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static void request(String namespace, Long seconds, String node) {
        TokenRequestBuilder request = new TokenRequestBuilder().withNewSpec().endSpec();
        if (seconds != null) {
            request.editSpec().withExpirationSeconds(seconds).endSpec();
        }
        if (node != null) {
            request.editSpec()
                    .withNewBoundObjectRef()
                    .withApiVersion("v1")
                    .withKind("Node")
                    .withName(node)
                    .endBoundObjectRef()
                    .endSpec();
        }
        admin.serviceAccounts().inNamespace(namespace).withName("robot").tokenRequest(request.build());
    }

    @Test
    void admissionSeesTheDefaultedTokenRequestOnTheTokenSubresource() {
        assertThatThrownBy(() -> request("probed", null, null))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("ValidatingAdmissionPolicy 'probe' with binding 'probe' denied request:"
                        + " authentication.k8s.io/v1 TokenRequest serviceaccounts/token CREATE name=robot old=true"
                        + " ns=probed object=TokenRequest robot/probed aud="
                        + ServiceAccountTokens.ISSUER + " exp=3600 status=false");
    }

    @Test
    void admissionComesBeforeTheBoundObjectIsLookedUpAndTheLifetimeIsCut() {
        assertThatThrownBy(() -> request("probed", 1L << 31, "no-such-node"))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("exp=" + (1L << 31) + " status=false");
        assertThatThrownBy(() -> request("other", 1L << 31, "no-such-node"))
                .as("elsewhere the missing node is what fails")
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("nodes \"no-such-node\" not found");
        assertThatThrownBy(() -> request("probed", 599L, null))
                .as("static validation comes first")
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("may not specify a duration less than 10 minutes");
    }

    @Test
    void aNameOrNamespaceInTheBodyMustBeThePaths() {
        assertThatThrownBy(() -> admin.serviceAccounts()
                        .inNamespace("other")
                        .withName("robot")
                        .tokenRequest(new TokenRequestBuilder()
                                .withNewMetadata()
                                .withName("someone-else")
                                .endMetadata()
                                .withNewSpec()
                                .endSpec()
                                .build()))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("metadata.name: Invalid value: \"someone-else\": must match the service"
                        + " account name if specified");
        assertThat(admin.serviceAccounts()
                        .inNamespace("other")
                        .withName("robot")
                        .tokenRequest(new TokenRequestBuilder()
                                .withNewSpec()
                                .endSpec()
                                .build())
                        .getMetadata()
                        .getName())
                .isEqualTo("robot");
    }
}
