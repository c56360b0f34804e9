package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ImageReferenceTest {

    private static final String HEX = "a".repeat(64);

    @ParameterizedTest
    @CsvSource(
            nullValues = "-",
            value = {
                "busybox,                         docker.io,        library/busybox,  -,      -",
                "busybox:1.36,                    docker.io,        library/busybox,  1.36,   -",
                "user/app:v2,                     docker.io,        user/app,         v2,     -",
                "index.docker.io/user/app,        docker.io,        user/app,         -,      -",
                "docker.io/busybox,               docker.io,        library/busybox,  -,      -",
                "ghcr.io/org/team/app:1.0,        ghcr.io,          org/team/app,     1.0,    -",
                "localhost/app,                   localhost,        app,              -,      -",
                "127.0.0.1:5000/app:latest,       127.0.0.1:5000,   app,              latest, -",
                "registry.local:443/a_b/c-d__e.f, registry.local:443, a_b/c-d__e.f,   -,      -",
            })
    void aReferenceIsReadAsDockerAndTheKubeletReadIt(
            String image, String registry, String repository, String tag, String digest) {
        ImageReference r = ImageReference.parse(image);
        assertThat(r.registry()).isEqualTo(registry);
        assertThat(r.repository()).isEqualTo(repository);
        assertThat(r.tag()).isEqualTo(tag);
        assertThat(r.digest()).isNull();
    }

    @Test
    void aDigestPinsTheContentWhateverTheTagSays() {
        ImageReference r = ImageReference.parse("ghcr.io/org/app:1.0@sha256:" + HEX);
        assertThat(r.tag()).isEqualTo("1.0");
        assertThat(r.digest()).isEqualTo(new Digest(HEX));
        assertThat(r.manifestReference()).isEqualTo("sha256:" + HEX);
        assertThat(r).hasToString("ghcr.io/org/app:1.0@sha256:" + HEX);
    }

    @Test
    void thePullPolicyDefaultsAsTheKubeletsDoes() {
        assertThat(ImageReference.parse("busybox").defaultPullPolicy()).isEqualTo(PullPolicy.Always);
        assertThat(ImageReference.parse("busybox:latest").defaultPullPolicy()).isEqualTo(PullPolicy.Always);
        assertThat(ImageReference.parse("busybox:1.36").defaultPullPolicy()).isEqualTo(PullPolicy.IfNotPresent);
        assertThat(ImageReference.parse("busybox@sha256:" + HEX).defaultPullPolicy())
                .isEqualTo(PullPolicy.IfNotPresent);
    }

    @Test
    void dockerHubIsAskedOnItsApiHostAndAnUntaggedImageForLatest() {
        ImageReference r = ImageReference.parse("busybox");
        assertThat(r.apiHost()).isEqualTo("registry-1.docker.io");
        assertThat(r.manifestReference()).isEqualTo("latest");
        assertThat(ImageReference.parse("127.0.0.1:5000/app").apiHost()).isEqualTo("127.0.0.1:5000");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "''                               | image is empty",
                "Busybox                          | invalid repository",
                "busybox:                         | invalid tag",
                "busybox:-x                       | invalid tag",
                "app/../etc                       | invalid repository",
                "app//x                           | invalid repository",
                "busybox@sha256:abc               | is not sha256",
                "busybox@md5:" + "0123456789abcdef0123456789abcdef | is not sha256",
                "bad_host.io:x/app                | invalid registry",
            })
    void aBadReferenceIsRefusedSayingWhichPart(String image, String why) {
        assertThatThrownBy(() -> ImageReference.parse(image))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why);
    }

    @Test
    void anOverlongNameIsRefused() {
        assertThatThrownBy(() -> ImageReference.parse("r.io/" + "a".repeat(500)))
                .hasMessageContaining("too long");
        assertThatThrownBy(() -> ImageReference.parse("r.io/" + "a".repeat(251)))
                .hasMessageContaining("longer than 255");
        assertThatThrownBy(() -> ImageReference.parse("r.io/app\nEvil")).hasMessageContaining("invalid repository");
    }
}
