package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The registry client against a real distribution registry with TLS, open and behind htpasswd. */
class RegistryClientTest {

    @TempDir
    static Path dir;

    private static TestRegistry open;
    private static TestRegistry locked;
    private static TestRegistry tokened;
    private static TestImage image;
    private static Digest pushed;

    @BeforeAll
    static void registries() throws Exception {
        open = TestRegistry.start(Files.createDirectory(dir.resolve("open")), TestRegistry.Auth.NONE);
        locked = TestRegistry.start(Files.createDirectory(dir.resolve("locked")), TestRegistry.Auth.HTPASSWD);
        tokened = TestRegistry.start(Files.createDirectory(dir.resolve("tokened")), TestRegistry.Auth.TOKEN);
        image = TestImage.of(
                Map.of("Entrypoint", List.of("/bin/sh"), "Cmd", List.of("-c", "echo hi")),
                false,
                new TestImage.Layer(TestImage.Compression.GZIP).busybox());
        pushed = open.push("tools/busybox", "1.36", image);
        locked.push("private/busybox", "1.36", image);
        tokened.push("public/busybox", "1.36", image);
        tokened.push("private/busybox", "1.36", image);
    }

    @AfterAll
    static void stop() throws Exception {
        open.close();
        locked.close();
        tokened.close();
    }

    private static RegistryClient client(TestRegistry r) {
        return new RegistryClient(r.tls(), Duration.ofSeconds(10), InstantSource.system());
    }

    @Test
    void aManifestIsFetchedByTagAndByDigestAndItsBlobsVerified() throws Exception {
        ImageReference ref = ImageReference.parse(open.host() + "/tools/busybox:1.36");
        try (RegistryClient client = client(open)) {
            RegistryClient.Fetched byTag = client.manifest(open.host(), ref, "1.36", Optional.empty());
            assertThat(byTag.digest()).isEqualTo(pushed);
            assertThat(byTag.mediaType()).isEqualTo(Manifests.OCI_MANIFEST);
            RegistryClient.Fetched byDigest = client.manifest(open.host(), ref, pushed.toString(), Optional.empty());
            assertThat(byDigest.body()).isEqualTo(byTag.body());
            Manifests.Image m = Manifests.image(byTag.body());
            Descriptor layer = m.layers().getFirst();
            List<Long> progress = new CopyOnWriteArrayList<>();
            Path target = dir.resolve("layer");
            client.blob(open.host(), ref, layer, Optional.empty(), target, progress::add);
            assertThat(Files.size(target)).isEqualTo(layer.size());
            assertThat(progress).last().isEqualTo(layer.size());
        }
    }

    @Test
    void aBlobLargerThanItsManifestSaysIsRefusedAndNothingIsKept() throws Exception {
        ImageReference ref = ImageReference.parse(open.host() + "/tools/busybox:1.36");
        try (RegistryClient client = client(open)) {
            Descriptor layer = Manifests.image(client.manifest(open.host(), ref, "1.36", Optional.empty())
                            .body())
                    .layers()
                    .getFirst();
            Descriptor lying = new Descriptor(layer.mediaType(), layer.digest(), layer.size() - 1);
            Path target = dir.resolve("short");
            assertThatThrownBy(() -> client.blob(open.host(), ref, lying, Optional.empty(), target, n -> {}))
                    .isInstanceOf(ImagePullException.class)
                    .hasMessageContaining("larger than the " + (layer.size() - 1) + " bytes its manifest gives");
            assertThat(target).doesNotExist();
        }
    }

    @Test
    void anUnknownTagIsTheRegistrysOwnReason() throws Exception {
        ImageReference ref = ImageReference.parse(open.host() + "/tools/busybox:nope");
        try (RegistryClient client = client(open)) {
            assertThatThrownBy(() -> client.manifest(open.host(), ref, "nope", Optional.empty()))
                    .isInstanceOf(ImagePullException.class)
                    .hasMessageContaining("answered 404")
                    .hasMessageContaining("MANIFEST_UNKNOWN");
        }
    }

    @Test
    void aPrivateImageNeedsItsCredentialsAndRefusesWrongOnes() throws Exception {
        ImageReference ref = ImageReference.parse(locked.host() + "/private/busybox:1.36");
        try (RegistryClient client = client(locked)) {
            assertThatThrownBy(() -> client.manifest(locked.host(), ref, "1.36", Optional.empty()))
                    .hasMessageContaining("asks for credentials")
                    .hasMessageContaining("spec.imagePullSecrets");
            Optional<RegistryCredentials> wrong = Optional.of(new RegistryCredentials(TestRegistry.USER, "guess"));
            assertThatThrownBy(() -> client.manifest(locked.host(), ref, "1.36", wrong))
                    .hasMessageContaining("refused the credentials")
                    .hasMessageNotContaining("guess");
        }
        Optional<RegistryCredentials> right = DockerConfig.parse(
                        TestRegistry.dockerConfig(locked.host(), TestRegistry.USER, TestRegistry.PASSWORD))
                .forRegistry(locked.host());
        try (RegistryClient client = client(locked)) {
            assertThat(client.manifest(locked.host(), ref, "1.36", right).digest())
                    .isEqualTo(pushed);
        }
    }

    @Test
    void aManifestAskedForByDigestMustHaveIt() throws Exception {
        ImageReference ref = ImageReference.parse(open.host() + "/tools/busybox:1.36");
        Digest other = Digest.of("not this".getBytes());
        try (RegistryClient client = client(open)) {
            assertThatThrownBy(() -> client.manifest(open.host(), ref, other.toString(), Optional.empty()))
                    .hasMessageContaining("answered 404");
        }
    }

    @Test
    void aBearerTokenIsFetchedFromTheRealmAnonymouslyOrWithCredentialsAndReused() throws Exception {
        ImageReference open = ImageReference.parse(tokened.host() + "/public/busybox:1.36");
        ImageReference closed = ImageReference.parse(tokened.host() + "/private/busybox:1.36");
        try (RegistryClient client = client(tokened)) {
            RegistryClient.Fetched m = client.manifest(tokened.host(), open, "1.36", Optional.empty());
            assertThat(m.digest()).isEqualTo(pushed);
            int issued = tokened.tokensIssued();
            Descriptor layer = Manifests.image(m.body()).layers().getFirst();
            client.blob(tokened.host(), open, layer, Optional.empty(), dir.resolve("tokened-layer"), n -> {});
            assertThat(tokened.tokensIssued())
                    .as("the token is reused for the blob")
                    .isEqualTo(issued);
            assertThatThrownBy(() -> client.manifest(tokened.host(), closed, "1.36", Optional.empty()))
                    .hasMessageContaining("refused an anonymous pull");
            Optional<RegistryCredentials> user =
                    Optional.of(new RegistryCredentials(TestRegistry.USER, TestRegistry.PASSWORD));
            assertThat(client.manifest(tokened.host(), closed, "1.36", user).digest())
                    .isEqualTo(pushed);
        }
    }

    @Test
    void aTokenWonWithOneTenantsCredentialsNeverServesAnothersPull() throws Exception {
        ImageReference closed = ImageReference.parse(tokened.host() + "/private/busybox:1.36");
        Optional<RegistryCredentials> tenantA =
                Optional.of(new RegistryCredentials(TestRegistry.USER, TestRegistry.PASSWORD));
        try (RegistryClient client = client(tokened)) {
            assertThat(client.manifest(tokened.host(), closed, "1.36", tenantA).digest())
                    .isEqualTo(pushed);
            assertThatThrownBy(() -> client.manifest(tokened.host(), closed, "1.36", Optional.empty()))
                    .as("no credentials: A's cached token must not be sent")
                    .hasMessageContaining("refused an anonymous pull");
            Optional<RegistryCredentials> tenantB = Optional.of(new RegistryCredentials(TestRegistry.USER, "guess"));
            assertThatThrownBy(() -> client.manifest(tokened.host(), closed, "1.36", tenantB))
                    .as("wrong credentials: A's cached token must not be sent")
                    .hasMessageContaining("refused the credentials")
                    .hasMessageNotContaining("guess");
            assertThat(client.manifest(tokened.host(), closed, "1.36", tenantA).digest())
                    .as("A's own pull still has its token")
                    .isEqualTo(pushed);
        }
    }

    @Test
    void basicCredentialsOneTenantSentAreNeverSentForAnothersPull() throws Exception {
        ImageReference ref = ImageReference.parse(locked.host() + "/private/busybox:1.36");
        Optional<RegistryCredentials> tenantA =
                Optional.of(new RegistryCredentials(TestRegistry.USER, TestRegistry.PASSWORD));
        try (RegistryClient client = client(locked)) {
            assertThat(client.manifest(locked.host(), ref, "1.36", tenantA).digest())
                    .isEqualTo(pushed);
            assertThatThrownBy(() -> client.manifest(locked.host(), ref, "1.36", Optional.empty()))
                    .hasMessageContaining("asks for credentials");
            Optional<RegistryCredentials> tenantB = Optional.of(new RegistryCredentials("intruder", "guess"));
            assertThatThrownBy(() -> client.manifest(locked.host(), ref, "1.36", tenantB))
                    .hasMessageContaining("refused the credentials");
        }
    }
}
