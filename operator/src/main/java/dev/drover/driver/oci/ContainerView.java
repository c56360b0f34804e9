package dev.drover.driver.oci;

import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskMount;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a container sees its task: Drover's directories and the host volumes bound into it, and the environment that
 * names them by their paths inside.
 */
final class ContainerView {

    private ContainerView() {}

    /** The image's environment, then the task's over it, Drover's directories named as the container sees them. */
    static List<String> environment(List<String> imageEnv, TaskConfig task) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String kv : imageEnv) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                env.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        env.putIfAbsent("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
        Map<String, String> inside = Map.of(
                task.secretsDir().toString(), "/secrets",
                task.taskDir().resolve("local").toString(), "/local",
                task.taskDir().toString(), "/local",
                task.allocDir().toString(), "/alloc");
        task.env().forEach((k, v) -> env.put(k, containerPath(v, inside)));
        List<String> out = new ArrayList<>();
        env.forEach((k, v) -> out.add(k + "=" + v));
        return out;
    }

    /** {@code value} with a host directory the container sees elsewhere replaced by its path there. */
    private static String containerPath(String value, Map<String, String> inside) {
        String best = null;
        for (String host : inside.keySet()) {
            if ((value.equals(host) || value.startsWith(host + "/"))
                    && (best == null || host.length() > best.length())) {
                best = host;
            }
        }
        return best == null ? value : inside.get(best) + value.substring(best.length());
    }

    /**
     * Drover's directories, then what the task is lent ({@link TaskConfig#attachments()}: host volumes), in order: a
     * destination below {@code /local} or {@code /alloc} lands inside the directory bound there before it.
     */
    static List<OciSpec.Bind> binds(TaskConfig task) {
        List<OciSpec.Bind> out = new ArrayList<>(List.of(
                new OciSpec.Bind(task.allocDir().toString(), "/alloc", false),
                new OciSpec.Bind(task.taskDir().resolve("local").toString(), "/local", false),
                new OciSpec.Bind(task.secretsDir().toString(), "/secrets", true),
                new OciSpec.Bind(task.taskDir().resolve("tmp").toString(), "/tmp", false)));
        for (TaskMount m : task.attachments().mounts()) {
            out.add(new OciSpec.Bind(m.source().toString(), m.destination(), m.readOnly()));
        }
        return List.copyOf(out);
    }
}
