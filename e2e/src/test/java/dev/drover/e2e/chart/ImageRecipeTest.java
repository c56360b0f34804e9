package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** operator/Dockerfile packages the jar the operator build produces, and starts it the way the chart expects. */
class ImageRecipeTest {

    private static final Path OPERATOR = Path.of("..", "operator");

    @Test
    void dockerfileCopiesTheShadedAgentJarAndStartsIt() throws IOException {
        String dockerfile = Files.readString(OPERATOR.resolve("Dockerfile"));
        Matcher finalName = Pattern.compile("<finalName>([^<]+)</finalName>")
                .matcher(Files.readString(OPERATOR.resolve("pom.xml")));
        assertThat(finalName.find()).as("operator/pom.xml names its shaded jar").isTrue();
        String jar = finalName.group(1) + ".jar";

        String options = "operator/src/main/resources/META-INF/drover/agent.options";
        assertThat(dockerfile)
                .contains("FROM eclipse-temurin:25-jre")
                .contains("COPY operator/target/" + jar + " /app/" + jar)
                .contains("COPY " + options + " /app/agent.options")
                .contains("ENTRYPOINT [\"java\", \"@/app/agent.options\", \"-jar\", \"/app/" + jar + "\"]");
        assertThat(Files.readAllLines(Path.of("..", options)))
                .as("the JVM options: native access for SQLite and NVML, heap from the container's limit")
                .contains(
                        "--enable-native-access=ALL-UNNAMED", "-XX:MaxRAMPercentage=75", "-XX:+ExitOnOutOfMemoryError");
        assertThat(Files.readString(OPERATOR.resolve("Dockerfile.dockerignore")))
                .as("the build context sends only the jar and its options")
                .contains("!operator/target/" + jar)
                .contains("!" + options);
    }
}
