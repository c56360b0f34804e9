package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.drover.api.v1alpha1.Task;
import dev.drover.cli.flags.ParsedArgs;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The names {@link Completion} asks the cluster for, with the kubeconfig, context, token and namespace typed on the
 * command line being completed: the allocations of the namespace (one page, metadata only) and an allocation's tasks.
 * Whatever goes wrong, the answer is no names: nothing is printed to the terminal while the user types.
 */
final class ClusterNames implements Completion.Names {

    /** A TAB waits at most this long for each answer. */
    static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** What a shell takes as a completion as it is; a name with anything else is not offered. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,253}");

    private static final PrintStream SILENT = new PrintStream(OutputStream.nullOutputStream());

    @Override
    public List<String> allocations(ParsedArgs flags) {
        return quietly(flags, (calls, namespace) -> {
            List<String> names = new ArrayList<>();
            for (JsonNode item : calls.metadataList("/apis/drover.dev/v1alpha1/namespaces/"
                    + URLEncoder.encode(namespace, StandardCharsets.UTF_8) + "/allocations?limit="
                    + Completion.MAX_NAMES)) {
                names.add(item.path("metadata").path("name").asText(""));
            }
            return names;
        });
    }

    @Override
    public List<String> tasks(ParsedArgs flags, String alloc) {
        return quietly(flags, (calls, namespace) -> {
            AllocationParts a = calls.allocation(namespace, alloc);
            if (a == null || a.spec() == null || a.spec().getTasks() == null) {
                return List.of();
            }
            return a.spec().getTasks().stream()
                    .filter(Objects::nonNull)
                    .map(Task::getName)
                    .filter(Objects::nonNull)
                    .toList();
        });
    }

    private static List<String> quietly(ParsedArgs flags, ClusterAccess.OnCluster<List<String>> call) {
        try {
            return ClusterAccess.onCluster(PluginCommandLine.connection(flags), TIMEOUT, SILENT, call).stream()
                    .filter(n -> NAME.matcher(n).matches())
                    .toList();
        } catch (CommandFailure | RuntimeException e) {
            return List.of();
        }
    }
}
