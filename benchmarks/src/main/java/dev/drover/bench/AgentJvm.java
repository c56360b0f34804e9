package dev.drover.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The JVM options the agent image starts the agent with ({@code operator/src/main/jvm/agent.options}, an
 * argument file the Dockerfile passes as {@code java @/app/agent.options}), read from the agent's jar so that
 * the load harness measures the agent as it runs on a node.
 */
final class AgentJvm {

    static final String RESOURCE = "META-INF/drover/agent.options";

    private AgentJvm() {}

    static List<String> options() {
        try (InputStream in = AgentJvm.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is not on the classpath (is drover-operator?)");
            }
            return Arrays.stream(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\\s+"))
                    .filter(s -> !s.isBlank())
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
