package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import org.junit.jupiter.api.Test;

/**
 * The shipped agent jar carries what the agent runs and nothing it never loads: no Vert.x or Netty (every Kubernetes
 * client names the JDK's HTTP client), and native libraries only for the platforms the image is built for (Linux,
 * amd64 and arm64, glibc).
 */
class AgentJarContentTest {

    static final Path JAR = Path.of("..", "operator", "target", "drover-agent.jar");

    static List<String> entries() throws Exception {
        assertThat(JAR).as("the agent jar (./mvnw package builds it)").exists();
        try (JarFile jar = new JarFile(JAR.toFile())) {
            return jar.stream().map(ZipEntry::getName).toList();
        }
    }

    @Test
    void carriesNoVertxOrNetty() throws Exception {
        assertThat(entries())
                .noneMatch(name -> name.startsWith("io/vertx/") || name.startsWith("io/netty/"))
                .noneMatch(name -> name.startsWith("META-INF/native/") && name.contains("netty"));
    }

    @Test
    void carriesNativeLibrariesForLinuxAmd64AndArm64Only() throws Exception {
        List<String> natives = entries().stream()
                .filter(name -> name.endsWith(".so")
                        || name.endsWith(".dll")
                        || name.endsWith(".dylib")
                        || name.endsWith(".jnilib")
                        || name.endsWith(".a"))
                .toList();
        assertThat(natives)
                .containsExactlyInAnyOrder(
                        "org/sqlite/native/Linux/x86_64/libsqlitejdbc.so",
                        "org/sqlite/native/Linux/aarch64/libsqlitejdbc.so",
                        "linux/amd64/libzstd-jni-1.6.0-1.so",
                        "linux/aarch64/libzstd-jni-1.6.0-1.so");
    }

    @Test
    void staysWellBelowWhatItWasWithEveryPlatformsNatives() throws Exception {
        // 60.3 MB before the slimming, 37.5 MB after: a dependency that brings a new HTTP stack or natives shows here
        assertThat(Files.size(JAR)).isLessThan(42L * 1024 * 1024);
    }

    @Test
    void registersOnlyTheKubernetesKindsTheAgentReads() throws Exception {
        // fabric8's KubernetesDeserializer loads and instantiates every kind listed here when first used: 347 kinds
        // (some 585 classes) with every model's list; a kind not listed is read as a GenericKubernetesResource
        List<String> kinds;
        List<String> missing;
        try (JarFile jar = new JarFile(JAR.toFile())) {
            ZipEntry list = jar.getEntry("META-INF/services/io.fabric8.kubernetes.api.model.KubernetesResource");
            assertThat(list).as("fabric8's list of kinds").isNotNull();
            try (InputStream in = jar.getInputStream(list)) {
                kinds = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                        .lines()
                        .map(String::strip)
                        .filter(line -> !line.isEmpty() && !line.startsWith("#"))
                        .toList();
            }
            missing = kinds.stream()
                    .filter(kind -> jar.getEntry(kind.replace('.', '/') + ".class") == null)
                    .toList();
        }
        assertThat(missing)
                .as("kinds listed that the jar lacks (ServiceLoader would fail)")
                .isEmpty();
        // the Node is read as a GenericKubernetesResource where fabric8 does not know the kind in advance (the
        // agent's watch of its Node): reading it as fabric8's Node loads the Node model's some 90 classes
        assertThat(kinds)
                .doesNotContain("io.fabric8.kubernetes.api.model.Node", "io.fabric8.kubernetes.api.model.NodeList");
        assertThat(kinds)
                .contains(
                        "io.fabric8.kubernetes.api.model.Pod",
                        "io.fabric8.kubernetes.api.model.ConfigMapList",
                        "io.fabric8.kubernetes.api.model.Event",
                        "io.fabric8.kubernetes.api.model.ConfigMap",
                        "io.fabric8.kubernetes.api.model.Secret",
                        "io.fabric8.kubernetes.api.model.Service",
                        "io.fabric8.kubernetes.api.model.authentication.TokenReview",
                        "io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview",
                        "io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition",
                        "io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice")
                .noneMatch(kind -> kind.startsWith("io.fabric8.kubernetes.api.model.gatewayapi.")
                        || kind.startsWith("io.fabric8.kubernetes.api.model.resource.")
                        || kind.startsWith("io.fabric8.kubernetes.api.model.apps."))
                .hasSizeLessThan(120);
    }
}
