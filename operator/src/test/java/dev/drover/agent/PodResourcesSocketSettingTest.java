package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code podResourcesSocket}: where the kubelet's PodResources API is read. */
class PodResourcesSocketSettingTest {

    @TempDir
    Path dir;

    @Test
    void theKubeletsSocketIsWhereTheKubeletServesItUnlessFlagEnvironmentOrFileSayOtherwise() throws Exception {
        Map<String, String> node = Map.of("NODE_NAME", "n");
        assertThat(AgentConfig.load(List.of(), node).podResourcesSocket())
                .isEqualTo(Path.of("/var/lib/kubelet/pod-resources/kubelet.sock"));

        Path file = Files.writeString(dir.resolve("agent.yaml"), "podResourcesSocket: /from/file.sock\n");
        assertThat(AgentConfig.load(List.of("--config", file.toString()), node).podResourcesSocket())
                .isEqualTo(Path.of("/from/file.sock"));
        Map<String, String> env = Map.of("NODE_NAME", "n", "DROVER_POD_RESOURCES_SOCKET", "/from/env.sock");
        assertThat(AgentConfig.load(List.of("--config", file.toString()), env).podResourcesSocket())
                .isEqualTo(Path.of("/from/env.sock"));
        assertThat(AgentConfig.load(List.of("--pod-resources-socket=/from/flag.sock"), env)
                        .podResourcesSocket())
                .isEqualTo(Path.of("/from/flag.sock"));
    }

    @Test
    void helpNamesTheFlag() {
        assertThat(AgentFlags.help()).contains("--pod-resources-socket PATH");
    }
}
