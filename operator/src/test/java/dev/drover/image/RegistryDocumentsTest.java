package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** What registries and Secrets send, read: challenges, Docker configs, indexes and manifests. */
class RegistryDocumentsTest {

    private static final String D = "sha256:" + "b".repeat(64);

    @Test
    void aBearerChallengeGivesItsRealmServiceAndScope() {
        Challenge c = Challenge.parse("Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
                        + "scope=\"repository:library/busybox:pull\"")
                .orElseThrow();
        assertThat(c.scheme()).isEqualTo("bearer");
        assertThat(c.param("realm")).isEqualTo("https://auth.docker.io/token");
        assertThat(c.param("service")).isEqualTo("registry.docker.io");
        assertThat(c.param("scope")).isEqualTo("repository:library/busybox:pull");
        assertThat(Challenge.parse("Basic realm=\"x\\\"y\"").orElseThrow().param("realm"))
                .isEqualTo("x\"y");
        assertThat(Challenge.parse("basic").orElseThrow().scheme()).isEqualTo("basic");
        assertThat(Challenge.parse("Bearer realm=\"" + "x".repeat(5000) + "\"")).isEmpty();
        assertThat(Challenge.parse("\u0000evil realm=x")).isEmpty();
        assertThat(Challenge.parse(null)).isEmpty();
    }

    @Test
    void aDockerConfigGivesTheCredentialsOfTheRegistryAsTheKubeletMatchesIt() throws Exception {
        byte[] config = ("{\"auths\":{"
                        + "\"https://index.docker.io/v1/\":{\"auth\":\"aHViOmh1YnBhc3M=\"},"
                        + "\"r.io:5000\":{\"username\":\"u\",\"password\":\"p:w\"}}}")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(DockerConfig.parse(config).forRegistry("docker.io"))
                .contains(new RegistryCredentials("hub", "hubpass"));
        assertThat(DockerConfig.parse(config).forRegistry("r.io:5000")).contains(new RegistryCredentials("u", "p:w"));
        assertThat(DockerConfig.parse(config).forRegistry("r.io")).isEmpty();
        assertThat(new RegistryCredentials("u", "p:w").toString()).doesNotContain("p:w");
    }

    @Test
    void aBadDockerConfigIsRefusedWithoutShowingItsSecrets() {
        assertThatThrownBy(() -> DockerConfig.parse("not json".getBytes()).forRegistry("r.io"))
                .hasMessage("the Docker config is not JSON");
        assertThatThrownBy(() -> DockerConfig.parse("{}".getBytes()).forRegistry("r.io"))
                .hasMessageContaining("no \"auths\"");
        assertThatThrownBy(() -> DockerConfig.parse("{\"auths\":{\"r.io\":{\"auth\":\"!!secret!!\"}}}".getBytes())
                        .forRegistry("r.io"))
                .hasMessageContaining("not base64")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> DockerConfig.parse(new byte[300_000]).forRegistry("r.io"))
                .hasMessageContaining("larger than");
    }

    @Test
    void anIndexGivesTheManifestOfTheNodesPlatform() throws Exception {
        byte[] index = ("{\"schemaVersion\":2,\"mediaType\":\"" + Manifests.OCI_INDEX + "\",\"manifests\":["
                        + entry("arm", "v7", "c") + "," + entry("arm64", "v8", "d") + "," + entry("amd64", null, "e")
                        + "]}")
                .getBytes(StandardCharsets.UTF_8);
        assertThat(Manifests.forPlatform(index, new Platform("linux", "amd64", null)))
                .map(d -> d.digest().hex())
                .contains("e".repeat(64));
        assertThat(Manifests.forPlatform(index, new Platform("linux", "arm64", "v8")))
                .map(d -> d.digest().hex())
                .contains("d".repeat(64));
        assertThat(Manifests.forPlatform(index, new Platform("linux", "riscv64", null)))
                .isEmpty();
        assertThat(Manifests.platforms(index)).containsExactly("linux/arm/v7", "linux/arm64/v8", "linux/amd64");
        assertThat(Manifests.mediaType(null, index)).isEqualTo(Manifests.OCI_INDEX);
    }

    private static String entry(String arch, String variant, String hexChar) {
        return "{\"mediaType\":\"" + Manifests.OCI_MANIFEST + "\",\"digest\":\"sha256:" + hexChar.repeat(64)
                + "\",\"size\":10,\"platform\":{\"os\":\"linux\",\"architecture\":\"" + arch + "\""
                + (variant == null ? "" : ",\"variant\":\"" + variant + "\"") + "}}";
    }

    @Test
    void aManifestThatIsNotAContainerImageIsRefusedSayingWhy() {
        String artifact = "{\"schemaVersion\":2,\"config\":{\"mediaType\":\"application/vnd.cncf.helm.config.v1+json\","
                + "\"digest\":\"" + D + "\",\"size\":1},\"layers\":[]}";
        assertThatThrownBy(() -> Manifests.image(artifact.getBytes())).hasMessageContaining("not a container image's");
        String oddLayer = "{\"config\":{\"mediaType\":\"" + Manifests.OCI_CONFIG + "\",\"digest\":\"" + D
                + "\",\"size\":1},\"layers\":[{\"mediaType\":\"application/x-rar\",\"digest\":\"" + D
                + "\",\"size\":1}]}";
        assertThatThrownBy(() -> Manifests.image(oddLayer.getBytes())).hasMessageContaining("application/x-rar");
        String negative = "{\"config\":{\"mediaType\":\"" + Manifests.OCI_CONFIG + "\",\"digest\":\"" + D
                + "\",\"size\":-1},\"layers\":[]}";
        assertThatThrownBy(() -> Manifests.image(negative.getBytes())).hasMessageContaining("negative");
        StringBuilder many = new StringBuilder("{\"config\":{\"mediaType\":\"" + Manifests.OCI_CONFIG
                + "\",\"digest\":\"" + D + "\",\"size\":1},\"layers\":[");
        for (int i = 0; i <= Manifests.MAX_LAYERS; i++) {
            many.append(i == 0 ? "" : ",")
                    .append("{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar\",\"digest\":\"")
                    .append(D)
                    .append("\",\"size\":1}");
        }
        assertThatThrownBy(() -> Manifests.image((many + "]}").getBytes()))
                .hasMessageContaining("more than " + Manifests.MAX_LAYERS);
    }
}
