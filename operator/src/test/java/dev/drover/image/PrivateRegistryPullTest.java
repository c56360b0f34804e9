package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Images of registries that refuse anonymous pulls (htpasswd's Basic, and a token service's Bearer), pulled into the
 * node's store with the credentials an allocation's imagePullSecrets give, as the oci driver picks them.
 */
class PrivateRegistryPullTest {

    @TempDir
    static Path dir;

    private static TestRegistry basic;
    private static TestRegistry tokened;

    @BeforeAll
    static void registries() throws Exception {
        basic = TestRegistry.start(Files.createDirectory(dir.resolve("basic")), TestRegistry.Auth.HTPASSWD);
        tokened = TestRegistry.start(Files.createDirectory(dir.resolve("tokened")), TestRegistry.Auth.TOKEN);
        TestImage image = TestImage.of(
                Map.of("Entrypoint", List.of("/bin/sh")),
                false,
                new TestImage.Layer(TestImage.Compression.GZIP).busybox());
        basic.push("private/busybox", "1", image);
        tokened.push("private/busybox", "1", image);
    }

    @AfterAll
    static void stop() throws Exception {
        basic.close();
        tokened.close();
    }

    private static String config(String host, String user, String password) {
        return new String(TestRegistry.dockerConfig(host, user, password), StandardCharsets.UTF_8);
    }

    private static void pullsWithItsSecretOnly(TestRegistry registry, String refusal, Path at) throws Exception {
        ImageReference ref = ImageReference.parse(registry.host() + "/private/busybox:1");
        try (RegistryClient client =
                new RegistryClient(registry.tls(), Duration.ofSeconds(10), InstantSource.system())) {
            ImageStore store =
                    new ImageStore(at.resolve("store"), client, Platform.node(), 64L << 20, InstantSource.system());
            assertThatThrownBy(() -> store.pull(ref, PullPolicy.Always, Optional.empty(), PullListener.NONE))
                    .isInstanceOf(ImagePullException.class)
                    .hasMessageContaining(refusal);

            List<String> secrets = List.of(
                    config("other.example.com", "someone", "else"),
                    config(registry.host(), TestRegistry.USER, TestRegistry.PASSWORD));
            Optional<RegistryCredentials> chosen = DockerConfig.first(secrets, ref.registry());
            assertThat(chosen).contains(new RegistryCredentials(TestRegistry.USER, TestRegistry.PASSWORD));
            ImageStore.Image image = store.pull(ref, PullPolicy.Always, chosen, PullListener.NONE);
            assertThat(image.rootfs().resolve("bin/busybox")).isExecutable();

            // another tenant, on the same node and client, asking the registry again (Always): refused
            Optional<RegistryCredentials> wrong =
                    DockerConfig.first(List.of(config(registry.host(), TestRegistry.USER, "guess")), ref.registry());
            assertThatThrownBy(() -> store.pull(ref, PullPolicy.Always, wrong, PullListener.NONE))
                    .hasMessageContaining("refused the credentials")
                    .hasMessageNotContaining("guess");
            assertThatThrownBy(() -> store.pull(ref, PullPolicy.Always, Optional.empty(), PullListener.NONE))
                    .hasMessageContaining(refusal);
        }
    }

    @Test
    void aBasicAuthRegistryIsPulledWithTheSecretThatNamesIt(@TempDir Path at) throws Exception {
        pullsWithItsSecretOnly(basic, "asks for credentials", at);
    }

    @Test
    void aTokenAuthRegistryIsPulledWithTheSecretThatNamesIt(@TempDir Path at) throws Exception {
        pullsWithItsSecretOnly(tokened, "refused an anonymous pull", at);
    }
}
