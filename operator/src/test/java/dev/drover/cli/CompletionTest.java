package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.cli.flags.ParsedArgs;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a TAB after {@code kubectl drover ...} offers: the lines kubectl reads from {@code kubectl_complete-drover}. */
class CompletionTest {

    /** The cluster's names, and what each question asked about. */
    static final class FakeNames implements Completion.Names {
        final List<String> asked = new ArrayList<>();

        @Override
        public List<String> allocations(ParsedArgs flags) {
            asked.add("allocations in " + flags.value("--namespace"));
            return List.of("web", "worker", "db");
        }

        @Override
        public List<String> tasks(ParsedArgs flags, String alloc) {
            asked.add("tasks of " + alloc);
            return List.of("main", "sidecar");
        }
    }

    static List<String> complete(FakeNames names, String... words) {
        return Completion.complete(List.of(words), names);
    }

    @Test
    void theFirstWordIsACommand() {
        FakeNames names = new FakeNames();
        assertThat(complete(names, "st"))
                .containsExactly(
                        "stats\tCPU, memory and device usage of each task, from the agent",
                        "status\tthe allocation's status, its tasks' states and recent events, and its Kubernetes"
                                + " Events",
                        ":4");
        assertThat(complete(names, ""))
                .hasSize(PluginCommandLine.COMMANDS.size() + 2)
                .endsWith(":4");
        assertThat(complete(names, "__"))
                .as("the hidden command is not offered")
                .containsExactly(":4");
        assertThat(names.asked).as("no cluster call for a command").isEmpty();
    }

    @Test
    void allocationsComeFromTheNamespaceTyped() {
        FakeNames names = new FakeNames();
        assertThat(complete(names, "logs", "-n", "team-a", "w")).containsExactly("web", "worker", ":4");
        assertThat(names.asked).containsExactly("allocations in team-a");
        assertThat(complete(names, "status", "")).containsExactly("web", "worker", "db", ":4");
        assertThat(complete(names, "status", "web", ""))
                .as("status takes one allocation")
                .containsExactly(":4");
    }

    @Test
    void tasksFollowTheAllocationAndSignalsTheTask() {
        FakeNames names = new FakeNames();
        assertThat(complete(names, "logs", "web", "")).containsExactly("main", "sidecar", ":4");
        assertThat(names.asked).containsExactly("tasks of web");
        assertThat(complete(names, "signal", "web", "main", "SIGU")).containsExactly("SIGUSR1", "SIGUSR2", ":4");
        assertThat(complete(names, "exec", "web", "main", "")).containsExactly("--", ":4");
        assertThat(complete(names, "exec", "web", "main", "--", ""))
                .as("the command's own words")
                .containsExactly(":4");
    }

    @Test
    void flagsAndTheirValues() {
        FakeNames names = new FakeNames();
        assertThat(complete(names, "status", "web", "--o"))
                .containsExactly(
                        "--output\tjson or yaml: what the text shows, for scripts (field names:"
                                + " docs/api.md#kubectl-drover)",
                        ":4");
        assertThat(complete(names, "status", "web", "-o", "")).containsExactly("json", "yaml", ":4");
        assertThat(complete(names, "stats", "--kubeconfig", ""))
                .as("a file: the shell's own")
                .containsExactly(":0");
        assertThat(complete(names, "logs", "--tail", "")).containsExactly(":4");
        assertThat(complete(names, "completion", "")).containsExactly("bash", "zsh", "fish", ":4");
        assertThat(complete(names, "version", "--c"))
                .containsExactly(
                        "--client\tthe plugin's own version only; asks the cluster nothing",
                        "--context\tthe kubeconfig context to use (default: its current-context)",
                        ":4");
        assertThat(names.asked).isEmpty();
    }

    @Test
    void aHiddenCommandAnswersThroughThePlugin() {
        KubectlDroverTest.Run r = KubectlDroverTest.run(PluginCommandLine.COMPLETE, "comp");
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .isEqualTo(
                        "completion\t" + PluginCommandLine.command("completion").summary() + "\n:4\n");
        KubectlDroverTest.Run noCluster = KubectlDroverTest.run(
                PluginCommandLine.COMPLETE, "logs", "--kubeconfig", "/nonexistent/kubeconfig", "");
        assertThat(noCluster.err()).as("a TAB prints no error").isEmpty();
        assertThat(noCluster.out()).isEqualTo(":4\n");
    }

    @Test
    void completionPrintsAScriptForEachShell() {
        assertThat(KubectlDroverTest.run("completion", "bash").out())
                .contains("complete -o default -F _kubectl_drover kubectl-drover", "__complete");
        assertThat(KubectlDroverTest.run("completion", "zsh").out()).startsWith("#compdef kubectl-drover");
        assertThat(KubectlDroverTest.run("completion", "fish").out()).contains("complete -c kubectl-drover");
        KubectlDroverTest.Run r = KubectlDroverTest.run("completion", "tcsh");
        assertThat(r.exit()).isEqualTo(KubectlDrover.EXIT_USAGE);
        assertThat(r.err()).contains("completion needs the shell: kubectl drover completion bash|zsh|fish");
    }
}
