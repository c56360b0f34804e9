package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * operator/Dockerfile builds the agent from source (no Maven on the building machine), packages the jar the
 * operator build produces, starts it the way the chart expects, not as root, and is tagged as the chart's default
 * image. No Docker here: these read the recipe against the files it names.
 */
class ImageRecipeTest {

    private static final Path ROOT = Path.of("..");
    private static final Path OPERATOR = ROOT.resolve("operator");
    private static final String OPTIONS = "operator/src/main/resources/META-INF/drover/agent.options";

    @Test
    void aBuildStageCompilesTheAgentWithTheRepositorysMavenWrapper() throws IOException {
        String dockerfile = dockerfile();
        assertThat(dockerfile)
                .contains("FROM eclipse-temurin:25-jdk AS build")
                .as("a C compiler and a static libc for drover-monitor")
                .contains("gcc libc6-dev")
                .contains(
                        "./mvnw -B -q -pl operator,benchmarks -am package -DskipTests -Ddrover.aot.skip=true -Ddrover.dist.skip=true");
        for (Matcher copy = Pattern.compile("(?m)^COPY (\\S+) ").matcher(dockerfile); copy.find(); ) {
            if (!copy.group(1).startsWith("--from")) {
                assertThat(ROOT.resolve(copy.group(1)))
                        .as("COPY %s names a path of the repository", copy.group(1))
                        .exists();
            }
        }
        List<String> modules = List.of("common", "crds", "deviceplugin", "operator", "localcluster", "benchmarks");
        assertThat(Files.readString(ROOT.resolve("operator/pom.xml")))
                .as("the agent's own modules are the ones copied")
                .contains(
                        "<artifactId>drover-common</artifactId>",
                        "<artifactId>drover-crds</artifactId>",
                        "<artifactId>drover-deviceplugin</artifactId>");
        String ignore = Files.readString(OPERATOR.resolve("Dockerfile.dockerignore"));
        for (String module : modules) {
            assertThat(dockerfile).contains("COPY " + module + " " + module);
            assertThat(ignore).contains("!" + module);
        }
        // Maven reads every module the parent names before it builds any: each one's pom must be in the context
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(ROOT.resolve("pom.xml")));
        while (module.find()) {
            String name = module.group(1);
            if (!modules.contains(name)) {
                assertThat(dockerfile)
                        .as("the parent's module %s is in the build stage", name)
                        .contains("COPY " + name + "/pom.xml " + name + "/");
                assertThat(ignore).contains("!" + name + "/pom.xml");
            }
        }
        assertThat(dockerfile)
                .as("the chart drover-local renders its RBAC from")
                .contains("COPY charts charts");
        assertThat(ignore).contains("!charts");
        assertThat(ignore)
                .as("the context starts empty and leaves out what was built locally")
                .startsWith("#")
                .contains("\n*\n", "!mvnw", "!pom.xml", "!.mvn/wrapper/maven-wrapper.properties", "**/target");
    }

    @Test
    void theImageRunsTheShadedAgentJarWithItsOptionsAsANonRootUser() throws IOException {
        String dockerfile = dockerfile();
        Matcher finalName = Pattern.compile("<finalName>([^<]+)</finalName>")
                .matcher(Files.readString(OPERATOR.resolve("pom.xml")));
        assertThat(finalName.find()).as("operator/pom.xml names its shaded jar").isTrue();
        String jar = finalName.group(1) + ".jar";

        assertThat(dockerfile)
                .contains("FROM eclipse-temurin:25-jre")
                .contains("cp operator/target/" + jar + " /" + jar)
                .contains("COPY --from=build /" + jar + " /app/" + jar)
                .contains("COPY " + OPTIONS + " /app/agent.options")
                .contains("USER 65532:65532")
                .contains("ENTRYPOINT [\"java\", \"@/app/agent.options\", \"@/app/aot.options\", \"-jar\", \"/app/"
                        + jar + "\"]");
        assertThat(dockerfile.indexOf("USER 65532:65532"))
                .as("the user is set in the final stage")
                .isGreaterThan(dockerfile.indexOf("FROM eclipse-temurin:25-jre"));
        assertThat(Files.readAllLines(ROOT.resolve(OPTIONS)))
                .as("the JVM options: native access for SQLite and NVML, heap from the container's limit")
                .contains(
                        "--enable-native-access=ALL-UNNAMED", "-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError");
    }

    @Test
    void theImageCarriesTheToolsItsProcessAndContainerTasksNeed() throws IOException {
        String runStage = dockerfile().substring(dockerfile().indexOf("FROM eclipse-temurin:25-jre"));
        assertThat(runStage)
                .as("setsid, nsenter and mount; kill; an OCI runtime for oci tasks in the agent's container")
                .contains("apt-get install -y --no-install-recommends util-linux procps runc");
    }

    /**
     * The CNI plugins of bridge and none networks run in the agent's container and call iptables there, whose
     * backend must be the node's (docs/networking.md#requirements): the image carries both, and the build picks the
     * backend.
     */
    @Test
    void theImageCarriesTheCniPluginsAndAnIptablesOfTheNodesBackend() throws IOException {
        String runStage = dockerfile().substring(dockerfile().indexOf("FROM eclipse-temurin:25-jre"));
        assertThat(runStage)
                .contains("--no-install-recommends util-linux procps runc containernetworking-plugins iptables")
                .contains("ARG DROVER_IPTABLES=nft")
                .contains("update-alternatives --set iptables \"/usr/sbin/iptables-$DROVER_IPTABLES\"")
                .contains("update-alternatives --set ip6tables \"/usr/sbin/ip6tables-$DROVER_IPTABLES\"");
        assertThat(runStage.indexOf("ARG DROVER_IPTABLES"))
                .as("the argument is declared in the stage that reads it, before the install")
                .isLessThan(runStage.indexOf("runc containernetworking-plugins iptables"));
        assertThat(Files.readString(ROOT.resolve("docs/networking.md")))
                .as("the documented build flag is the recipe's")
                .contains("--build-arg DROVER_IPTABLES=legacy");
        assertThat(Files.readString(ROOT.resolve("charts/drover/values.yaml")))
                .as("the chart names the image's plugin directory, where Debian's package puts them")
                .contains("/usr/lib/cni");
    }

    @Test
    void theDocumentedBuildTagsTheChartsDefaultImage() throws IOException {
        String chart = Files.readString(ROOT.resolve("charts/drover/Chart.yaml"));
        Matcher appVersion = Pattern.compile("(?m)^appVersion: \"([^\"]+)\"").matcher(chart);
        assertThat(appVersion.find()).isTrue();
        Matcher repository = Pattern.compile("(?m)^  repository: (\\S+)")
                .matcher(Files.readString(ROOT.resolve("charts/drover/values.yaml")));
        assertThat(repository.find()).isTrue();
        String image = repository.group(1) + ":" + appVersion.group(1);

        String build = "docker build -f operator/Dockerfile --build-arg DROVER_VERSION=" + appVersion.group(1);
        String dockerfile = dockerfile();
        assertThat(dockerfile)
                .contains("#   " + build + " \\\n#     --build-arg DROVER_REVISION=$(git rev-parse HEAD) -t " + image
                        + " .")
                .contains("org.opencontainers.image.licenses=\"Apache-2.0\"");
        assertThat(Files.readString(ROOT.resolve("docs/install.md")))
                .contains(build + " \\\n  --build-arg DROVER_REVISION=$(git rev-parse HEAD) -t " + image + " .");
        assertThat(Files.readString(ROOT.resolve("README.md"))).contains(build + " -t " + image + " .");
        assertThat(Files.readString(ROOT.resolve("pom.xml")))
                .contains("<version>" + appVersion.group(1) + "-SNAPSHOT</version>");
    }

    /**
     * The agent's AOT cache is recorded in the final stage, by its own Java, from the jar at the path it runs from,
     * with bench flags that exist (ApiServerJarIT runs such a training and starts the agent with its cache).
     */
    @Test
    void theImageTrainsTheAgentsAotCacheWithItsOwnJava() throws IOException {
        String dockerfile = dockerfile();
        String image = dockerfile.substring(dockerfile.indexOf("FROM eclipse-temurin:25-jre"));
        Matcher training = Pattern.compile("java -jar benchmarks/target/drover-bench.jar ((?:[^)\\\n]|\\\\\n)+)\\)")
                .matcher(image);
        assertThat(training.find()).as("a training run in the final stage").isTrue();
        List<String> words =
                List.of(training.group(1).replace("\\\n", " ").trim().split("\\s+"));
        assertThat(words)
                .containsSubsequence("--agent-jar", "/app/drover-agent.jar")
                .containsSubsequence("--aot-out", "/app/drover-agent.aot")
                .contains("--delete");
        List<String> flags = dev.drover.bench.Bench.flags().stream()
                .map(dev.drover.cli.flags.Flag::name)
                .toList();
        assertThat(words.stream().filter(w -> w.startsWith("--")).toList())
                .as("bench knows every flag")
                .isSubsetOf(flags);
        assertThat(image)
                .contains("--mount=type=bind,from=build,source=/src,target=/src")
                .contains("-XX:AOTMode=on -XX:AOTCache=/app/drover-agent.aot")
                .contains("echo \"-XX:AOTCache=/app/drover-agent.aot\" > /app/aot.options")
                .contains(": > /app/aot.options")
                .doesNotContain("COPY --from=build /src");
        assertThat(image.indexOf("--aot-out"))
                .as("trained after the jar and its options are in place")
                .isGreaterThan(image.indexOf("COPY " + OPTIONS + " /app/agent.options"));
    }

    /** The image's labels come from build arguments, each declared in the stage that uses it (ARGs are per stage). */
    @Test
    void theImagesVersionRevisionAndSourceLabelsComeFromTheBuild() throws IOException {
        String runStage = dockerfile().substring(dockerfile().indexOf("FROM eclipse-temurin:25-jre"));
        for (String label : List.of("version", "revision", "source")) {
            Matcher value = Pattern.compile("org\\.opencontainers\\.image\\." + label + "=\"\\$\\{(\\w+)}\"")
                    .matcher(runStage);
            assertThat(value.find())
                    .as("the %s label names a build argument", label)
                    .isTrue();
            assertThat(runStage).contains("ARG " + value.group(1));
        }
    }

    /** The build stage's version check, run as the build runs it, against the build-info the Maven build writes. */
    @Test
    void theBuildStopsWhenItsVersionArgumentIsNotTheSources() throws Exception {
        Matcher check = Pattern.compile("(?s)&& (built=.*?\\n\\s*fi)\\n").matcher(dockerfile());
        assertThat(check.find()).isTrue();
        String script = check.group(1).replace("\\\n", ""); // as Docker joins continued lines
        Path dir = Files.createTempDirectory("image-version");
        Path info = dir.resolve("operator/target/classes/META-INF/drover/build-info.properties");
        Files.createDirectories(info.getParent());
        Files.writeString(info, "version=0.3.0-SNAPSHOT\nrevision=abc\n");

        assertThat(runCheck(dir, script, "0.3.0").exitValue()).isZero();
        Process wrong = runCheck(dir, script, "0.2.0");
        assertThat(wrong.exitValue()).isEqualTo(1);
        assertThat(new String(wrong.getInputStream().readAllBytes()))
                .isEqualTo("this source is version 0.3.0: build with --build-arg DROVER_VERSION=0.3.0\n");
        assertThat(runCheck(dir, script, "").exitValue()).as("no version given").isEqualTo(1);
    }

    private static Process runCheck(Path dir, String script, String version) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("/bin/sh", "-c", script)
                .directory(dir.toFile())
                .redirectErrorStream(true);
        builder.environment().put("DROVER_VERSION", version);
        Process p = builder.start();
        p.waitFor();
        return p;
    }

    private static String dockerfile() throws IOException {
        return Files.readString(OPERATOR.resolve("Dockerfile"));
    }
}
