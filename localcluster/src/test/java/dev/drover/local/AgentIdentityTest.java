package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The peer token an agent on the local cluster gets, as the chart's projected volume gives it on a real one. */
class AgentIdentityTest {

    static LocalApiServer server;
    static AgentIdentity identity;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("n1")));
        identity = AgentIdentity.install(server, Path.of("..", "charts", "drover"));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    static TokenReview review(String token, String... audiences) {
        return server.client()
                .tokenReviews()
                .create(new TokenReviewBuilder()
                        .withNewSpec()
                        .withToken(token)
                        .withAudiences(audiences)
                        .endSpec()
                        .build());
    }

    @Test
    void thePeerTokenIsPrivateNamesTheNodeAndIsWorthlessAgainstTheApiServer() throws Exception {
        Path file = dir.resolve("peer/n1.peer-token");
        identity.writePeerToken("n1", file);
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        String token = Files.readString(file);

        TokenReview forAgents = review(token, AgentIdentity.PEER_AUDIENCE);
        assertThat(forAgents.getStatus().getAuthenticated()).isTrue();
        assertThat(forAgents.getStatus().getAudiences()).containsExactly("drover.dev/agent");
        assertThat(forAgents.getStatus().getUser().getUsername()).isEqualTo(identity.username());
        assertThat(forAgents.getStatus().getUser().getExtra())
                .containsEntry("authentication.kubernetes.io/node-name", List.of("n1"));

        assertThat(review(token).getStatus().getAuthenticated())
                .as("not for the API server's audience")
                .isNotEqualTo(Boolean.TRUE);
        try (AgentIdentity.Renewal renewal =
                identity.renew("n1", dir.resolve("n1.kubeconfig"), dir.resolve("n1.peer-token"))) {
            assertThat(dir.resolve("n1.peer-token")).isNotEmptyFile();
            assertThat(dir.resolve("n1.kubeconfig")).isNotEmptyFile();
        }
        try (var files = Files.list(file.getParent())) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .as("no temporary file is left")
                    .containsExactly("n1.peer-token");
        }
    }

    @Test
    void theAgentRunsInTheDaemonSetsPodOnItsNodeAndItsTokenIsBoundToThatPod() throws Exception {
        Path kubeconfig = dir.resolve("n1.kubeconfig");
        identity.writeKubeconfig("n1", kubeconfig);
        AgentIdentity.AgentPod pod = identity.agentPod("n1");
        assertThat(pod.name()).startsWith(AgentIdentity.RELEASE + "-");
        assertThat(pod.namespace()).isEqualTo(AgentIdentity.NAMESPACE);
        assertThat(identity.agentPod("n1")).as("one per node").isEqualTo(pod);

        io.fabric8.kubernetes.api.model.Pod running = server.client()
                .pods()
                .inNamespace(pod.namespace())
                .withName(pod.name())
                .waitUntilCondition(
                        p -> p.getStatus() != null
                                && "Running".equals(p.getStatus().getPhase()),
                        10,
                        java.util.concurrent.TimeUnit.SECONDS);
        assertThat(running.getSpec().getNodeName()).isEqualTo("n1");
        assertThat(running.getSpec().getServiceAccountName())
                .isEqualTo(identity.username().substring(identity.username().lastIndexOf(':') + 1));

        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\s*token:\\s*\"?([^\"\\s]+)")
                .matcher(Files.readString(kubeconfig));
        assertThat(m.find()).as("the kubeconfig holds a token").isTrue();
        String token = m.group(1);
        TokenReview reviewed = review(token);
        assertThat(reviewed.getStatus().getAuthenticated()).isTrue();
        assertThat(reviewed.getStatus().getUser().getExtra())
                .containsEntry("authentication.kubernetes.io/pod-name", List.of(pod.name()))
                .containsEntry("authentication.kubernetes.io/pod-uid", List.of(pod.uid()))
                .containsEntry("authentication.kubernetes.io/node-name", List.of("n1"))
                .containsKeys("authentication.kubernetes.io/node-uid", "authentication.kubernetes.io/credential-id");
    }

    @Test
    void onKubernetes135TheAgentResizesItsOwnPodsReservationAndTheKubeletAnswers() throws Exception {
        try (LocalApiServer small = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("n1"))
                .withKubeVersion("1.35")
                .withNodeAllocatable("cpu=2,memory=4Gi"))) {
            AgentIdentity agent = AgentIdentity.install(small, Path.of("..", "charts", "drover"));
            Path kubeconfig = dir.resolve("n1.kubeconfig");
            agent.writeKubeconfig("n1", kubeconfig);
            AgentIdentity.AgentPod pod = agent.agentPod("n1");
            var pods = small.client().pods().inNamespace(pod.namespace());
            io.fabric8.kubernetes.api.model.Pod running = pods.withName(pod.name())
                    .waitUntilCondition(
                            p -> p.getStatus() != null
                                    && "Running".equals(p.getStatus().getPhase()),
                            10,
                            java.util.concurrent.TimeUnit.SECONDS);
            List<String> names = running.getSpec().getContainers().stream()
                    .map(io.fabric8.kubernetes.api.model.Container::getName)
                    .toList();
            int at = names.indexOf("reservation");
            assertThat(at).as("the chart's reservation container, in %s", names).isNotNegative();

            String token = tokenOf(kubeconfig);
            String patch = "[{\"op\":\"test\",\"path\":\"/spec/containers/" + at
                    + "/name\",\"value\":\"reservation\"},{\"op\":\"replace\",\"path\":\"/spec/containers/" + at
                    + "/resources\",\"value\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"1Gi\"}}}]";
            assertThat(resize(small, token, pod, patch.formatted("500m")).statusCode())
                    .isEqualTo(200);
            io.fabric8.kubernetes.api.model.Pod resized = pods.withName(pod.name())
                    .waitUntilCondition(
                            p -> new io.fabric8.kubernetes.api.model.Quantity("500m")
                                    .equals(p.getStatus().getContainerStatuses().stream()
                                            .filter(c -> c.getName().equals("reservation"))
                                            .findFirst()
                                            .orElseThrow()
                                            .getAllocatedResources()
                                            .get("cpu")),
                            10,
                            java.util.concurrent.TimeUnit.SECONDS);
            assertThat(resized.getStatus().getObservedGeneration())
                    .isEqualTo(resized.getMetadata().getGeneration());

            assertThat(resize(small, token, pod, patch.formatted("3")).statusCode())
                    .isEqualTo(200);
            io.fabric8.kubernetes.api.model.PodCondition pending = pods
                    .withName(pod.name())
                    .waitUntilCondition(
                            p -> p.getStatus().getConditions().stream()
                                    .anyMatch(c -> c.getType().equals("PodResizePending")),
                            10,
                            java.util.concurrent.TimeUnit.SECONDS)
                    .getStatus()
                    .getConditions()
                    .stream()
                    .filter(c -> c.getType().equals("PodResizePending"))
                    .findFirst()
                    .orElseThrow();
            assertThat(pending.getReason()).isEqualTo("Infeasible");
            assertThat(pending.getMessage()).startsWith("Node didn't have enough capacity: cpu, requested: ");
        }
    }

    @Test
    void theAgentMayResizeNeitherAnotherContainerOfItsPodNorAnotherPod() throws Exception {
        try (LocalApiServer small = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("n1"))
                .withKubeVersion("1.35")
                .withNodeAllocatable("cpu=2,memory=4Gi"))) {
            AgentIdentity agent = AgentIdentity.install(small, Path.of("..", "charts", "drover"));
            Path kubeconfig = dir.resolve("n1-attack.kubeconfig");
            agent.writeKubeconfig("n1", kubeconfig);
            AgentIdentity.AgentPod pod = agent.agentPod("n1");
            String token = tokenOf(kubeconfig);
            small.client()
                    .pods()
                    .inNamespace("default")
                    .resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                            .withNewMetadata()
                            .withName("victim")
                            .withNamespace("default")
                            .endMetadata()
                            .withNewSpec()
                            .withNodeName("n1")
                            .addNewContainer()
                            .withName("app")
                            .withImage("registry.example/app:1")
                            .withNewResources()
                            .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("100m"))
                            .endResources()
                            .endContainer()
                            .endSpec()
                            .build())
                    .create();
            String agentContainer = "[{\"op\":\"test\",\"path\":\"/spec/containers/0/name\",\"value\":\"agent\"},"
                    + "{\"op\":\"replace\",\"path\":\"/spec/containers/0/resources/requests/cpu\",\"value\":\"1\"}]";

            java.net.http.HttpResponse<String> own = resize(small, token, pod, agentContainer);
            assertThat(own.statusCode()).isEqualTo(403);
            assertThat(own.body()).contains("may resize only its Pod's reservation container");

            java.net.http.HttpResponse<String> other = resize(
                    small,
                    token,
                    new AgentIdentity.AgentPod("victim", "default", "", "n1"),
                    "[{\"op\":\"replace\",\"path\":\"/spec/containers/0/resources/requests/cpu\",\"value\":\"1\"}]");
            assertThat(other.statusCode()).isEqualTo(403);
            assertThat(other.body()).contains("may resize its own Pod only");
            assertThat(small.client()
                            .pods()
                            .inNamespace("default")
                            .withName("victim")
                            .get()
                            .getSpec()
                            .getContainers()
                            .getFirst()
                            .getResources()
                            .getRequests()
                            .get("cpu"))
                    .isEqualTo(new io.fabric8.kubernetes.api.model.Quantity("100m"));
        }
    }

    static String tokenOf(Path kubeconfig) throws java.io.IOException {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\s*token:\\s*\"?([^\"\\s]+)")
                .matcher(Files.readString(kubeconfig));
        assertThat(m.find()).as("the kubeconfig holds a token").isTrue();
        return m.group(1);
    }

    static java.net.http.HttpResponse<String> resize(
            LocalApiServer server, String token, AgentIdentity.AgentPod pod, String patch) throws Exception {
        return java.net.http.HttpClient.newBuilder()
                .sslContext(server.trust())
                .build()
                .send(
                        java.net.http.HttpRequest.newBuilder(server.url()
                                        .resolve("/api/v1/namespaces/" + pod.namespace() + "/pods/" + pod.name()
                                                + "/resize"))
                                .header("Authorization", "Bearer " + token)
                                .header("Content-Type", "application/json-patch+json")
                                .method("PATCH", java.net.http.HttpRequest.BodyPublishers.ofString(patch))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void beforeKubernetes130TheChartIsRenderedWithoutNodeConfinement() throws Exception {
        // the chart refuses to leave the policies out unless told to: installing must tell it on 1.29
        try (LocalApiServer old = LocalApiServer.start(
                LocalApiServer.Options.defaults().withNodes(List.of("n1")).withKubeVersion("1.29"))) {
            AgentIdentity older = AgentIdentity.install(old, Path.of("..", "charts", "drover"));
            assertThat(older.username()).isEqualTo(identity.username());
            assertThat(mayMintTokens(old))
                    .as("unconfined, an agent may mint no token")
                    .isFalse();
        }
    }

    @Test
    void theAgentMayMintTokensOnlyUnderTheChartsTokenPolicy() {
        assertThat(mayMintTokens(server)).isTrue();
        assertThat(server.client()
                        .admissionRegistration()
                        .v1()
                        .validatingAdmissionPolicyBindings()
                        .withName("drover-agent-tokens")
                        .get())
                .as("the local cluster applies the chart's token policy, as an install does")
                .isNotNull();
    }

    /** Whether the chart's agent may create serviceaccounts/token, as a SubjectAccessReview answers. */
    static boolean mayMintTokens(LocalApiServer on) {
        return on.client()
                .authorization()
                .v1()
                .subjectAccessReview()
                .create(new io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder()
                        .withNewSpec()
                        .withUser(identity.username())
                        .withNewResourceAttributes()
                        .withNamespace("default")
                        .withVerb("create")
                        .withResource("serviceaccounts")
                        .withSubresource("token")
                        .withName("default")
                        .endResourceAttributes()
                        .endSpec()
                        .build())
                .getStatus()
                .getAllowed();
    }
}
