package dev.drover.taskrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.credentials.ObjectRef;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import dev.drover.taskrunner.hooks.NoCredentialsHook;
import dev.drover.taskrunner.identity.ImagePullSecrets;
import dev.drover.taskrunner.identity.WorkloadIdentity;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** An oci task's registry credentials, read from its allocation's imagePullSecrets against a fake API server. */
class ImagePullSecretsTest {

    static final AllocId ALLOC = new AllocId("team", "a");
    static final String PASSWORD = "pull-s3cr3t";
    static final String CONFIG = "{\"auths\":{\"r.io\":{\"auth\":\""
            + Base64.getEncoder().encodeToString(("u:" + PASSWORD).getBytes()) + "\"}}}";

    final FakeCredentials api = new FakeCredentials();

    static AllocationSpec spec(String yaml) {
        return Serialization.unmarshal(
                        "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: a, namespace: team}\n"
                                + "spec:\n  nodeName: n\n" + yaml.indent(2),
                        Allocation.class)
                .getSpec();
    }

    void secret(String name, String type, Map<String, String> data) {
        api.put(ObjectRef.Kind.Secret, name, data);
        if (type != null) {
            api.types.put(name, type);
        }
    }

    TaskHookContext prestart(AllocationSpec spec) throws TaskHookException {
        Task task = spec.getTasks().get(0);
        Path dir = Path.of("/nonexistent");
        TaskHookContext ctx = new TaskHookContext(
                ALLOC,
                task,
                spec,
                new TaskConfig("team", "a", task.getName(), Map.of(), Map.of(), dir, dir, dir, dir),
                Clock.systemUTC(),
                e -> {});
        new ImagePullSecrets(WorkloadIdentity.of(api, Duration.ofMinutes(1), Clock.systemUTC())).prestart(ctx);
        return ctx;
    }

    @Test
    void anOciTaskIsLentEachSecretsDockerConfigInOrder() throws Exception {
        secret("first", ImagePullSecrets.TYPE, Map.of(ImagePullSecrets.KEY, CONFIG));
        secret("second", ImagePullSecrets.TYPE, Map.of(ImagePullSecrets.KEY, "{\"auths\":{}}"));
        TaskHookContext ctx = prestart(spec("""
                serviceAccountName: puller
                imagePullSecrets: [{name: first}, {name: second}]
                tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                """));
        assertThat(ctx.attachments().build().registryConfigs()).containsExactly(CONFIG, "{\"auths\":{}}");
        assertThat(ctx.attachments().build().toString()).doesNotContain(PASSWORD);
        assertThat(api.tokenRequests).containsExactly("team/puller/null/3600");
    }

    @Test
    void aTaskOfAnotherDriverReadsNothing() throws Exception {
        secret("first", ImagePullSecrets.TYPE, Map.of(ImagePullSecrets.KEY, CONFIG));
        TaskHookContext ctx = prestart(spec("""
                imagePullSecrets: [{name: first}, {name: missing}]
                tasks: [{name: web, driver: raw_exec, config: {command: /bin/true}}]
                """));
        assertThat(ctx.attachments().build().registryConfigs()).isEmpty();
        assertThat(api.reads.get()).isZero();
        assertThat(api.minted.get()).as("no token either").isZero();
    }

    @Test
    void aMissingSecretFailsTheSetupNamingIt() {
        assertThatThrownBy(() -> prestart(spec("""
                        imagePullSecrets: [{name: gone}]
                        tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                        """)))
                .isInstanceOfSatisfying(
                        TaskHookException.class, e -> assertThat(e.eventType()).isEqualTo(TaskEventType.SetupFailure))
                .hasMessage("Secret team/gone (spec.imagePullSecrets[0]) was not found; create it, or remove it from"
                        + " spec.imagePullSecrets");
    }

    @Test
    void aForbiddenSecretFailsTheSetupSayingWhoMayNotReadIt() {
        secret("locked", ImagePullSecrets.TYPE, Map.of(ImagePullSecrets.KEY, CONFIG));
        api.forbidden.add(new ObjectRef(ObjectRef.Kind.Secret, "team", "locked"));
        assertThatThrownBy(() -> prestart(spec("""
                        serviceAccountName: web
                        imagePullSecrets: [{name: locked}]
                        tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                        """)))
                .hasMessageStartingWith("cannot read Secret team/locked (spec.imagePullSecrets[0]) with ServiceAccount"
                        + " web (give it get on that Secret): ")
                .hasMessageContaining("forbidden")
                .hasMessageNotContaining(PASSWORD);
    }

    @Test
    void aSecretOfAnotherTypeIsRefusedNamingItsType() {
        secret("opaque", null, Map.of(ImagePullSecrets.KEY, CONFIG));
        secret("tls", "kubernetes.io/tls", Map.of("tls.crt", "x", "tls.key", PASSWORD));
        assertThatThrownBy(() -> prestart(spec("""
                        imagePullSecrets: [{name: opaque}]
                        tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                        """)))
                .hasMessage("Secret team/opaque (spec.imagePullSecrets[0]) is of type \"Opaque\"; an image pull"
                        + " Secret must be of type kubernetes.io/dockerconfigjson (kubectl create secret"
                        + " docker-registry)");
        assertThatThrownBy(() -> prestart(spec("""
                        imagePullSecrets: [{name: tls}]
                        tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                        """)))
                .hasMessageContaining("is of type \"kubernetes.io/tls\"")
                .hasMessageNotContaining(PASSWORD);
    }

    @Test
    void anUnreadableOrOversizedDockerConfigIsRefusedWithoutItsPassword() {
        secret(
                "broken",
                ImagePullSecrets.TYPE,
                Map.of(ImagePullSecrets.KEY, "{\"auths\":{\"r.io\":\"" + PASSWORD + "\"}}"));
        secret("huge", ImagePullSecrets.TYPE, Map.of(ImagePullSecrets.KEY, " ".repeat(300_000)));
        secret("empty", ImagePullSecrets.TYPE, Map.of("other", "x"));
        assertThatThrownBy(() -> prestart(spec("""
                        imagePullSecrets: [{name: broken}]
                        tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                        """)))
                .hasMessage("Secret team/broken (spec.imagePullSecrets[0]): the Docker config's entry for \"r.io\" is"
                        + " not an object");
        assertThatThrownBy(() -> prestart(spec("""
                        imagePullSecrets: [{name: huge}]
                        tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                        """)))
                .hasMessage("Secret team/huge (spec.imagePullSecrets[0]) holds 300000 bytes of .dockerconfigjson; at"
                        + " most 262144 are read");
        assertThatThrownBy(() -> prestart(spec("""
                        imagePullSecrets: [{name: empty}]
                        tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                        """)))
                .hasMessage("Secret team/empty (spec.imagePullSecrets[0]) has no key .dockerconfigjson");
    }

    @Test
    void anAgentWithoutWorkloadIdentityRefusesAnOciTaskThatNamesPullSecrets() throws Exception {
        AllocationSpec oci = spec("""
                imagePullSecrets: [{name: first}]
                tasks: [{name: web, driver: oci, config: {image: r.io/app:1}}]
                """);
        Path dir = Path.of("/nonexistent");
        TaskConfig paths = new TaskConfig("team", "a", "web", Map.of(), Map.of(), dir, dir, dir, dir);
        TaskHookContext ctx = new TaskHookContext(ALLOC, oci.getTasks().get(0), oci, paths, Clock.systemUTC(), e -> {});
        assertThatThrownBy(() -> new NoCredentialsHook().prestart(ctx))
                .hasMessage("this agent reads no Secrets (it runs without workload identity); the allocation names"
                        + " spec.imagePullSecrets for its image");
        AllocationSpec other = spec("""
                imagePullSecrets: [{name: first}]
                tasks: [{name: web, driver: mock}]
                """);
        new NoCredentialsHook()
                .prestart(
                        new TaskHookContext(ALLOC, other.getTasks().get(0), other, paths, Clock.systemUTC(), e -> {}));
    }
}
