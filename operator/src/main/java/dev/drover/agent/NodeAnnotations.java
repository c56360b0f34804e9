package dev.drover.agent;

import dev.drover.driver.host.TaskCgroups;
import dev.drover.metrics.BuildInfo;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code drover.dev/} annotations an agent first writes on its Node: its version and revision (what {@code
 * kubectl drover version} reads) and, where it runs process tasks, the cgroup version they get. The agent API's port
 * and certificate are added by the agent once it serves.
 */
final class NodeAnnotations {

    private NodeAnnotations() {}

    static Map<String, String> initial(AgentConfig config, TaskCgroups cgroups) {
        Map<String, String> annotations =
                new LinkedHashMap<>(BuildInfo.current().nodeAnnotations());
        if (config.enableRawExec() || config.enableExec()) {
            annotations.put(TaskCgroups.ANNOTATION, cgroups.version());
        }
        return annotations;
    }
}
