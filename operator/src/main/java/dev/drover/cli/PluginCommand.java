package dev.drover.cli;

import java.util.List;

/**
 * A {@code kubectl drover} command line, read ({@link PluginCommandLine#parse}).
 *
 * @param stream {@code stdout} or {@code stderr}: which output {@code logs} reads
 * @param tail {@code logs --tail}: a number of lines, or null
 * @param raw {@code logs --raw}: the task's bytes as they are, also to a terminal
 * @param output {@code -o}: {@code json} or {@code yaml} ({@code stats --json} is {@code json}); null: text
 * @param command what {@code exec} runs: the words after {@code --}
 * @param client {@code version --client}: the plugin's version only
 * @param help whether the command line asks for help, of {@code verb} or (null) of the plugin
 */
record PluginCommand(
        String verb,
        List<String> args,
        String namespace,
        boolean follow,
        String stream,
        String tail,
        boolean raw,
        String output,
        String context,
        String kubeconfig,
        String token,
        boolean stdin,
        boolean tty,
        List<String> command,
        boolean verbose,
        boolean client,
        boolean help) {

    /** Whether the answer is asked for as JSON. */
    boolean json() {
        return "json".equals(output);
    }

    static PluginCommand help(String verb) {
        return new PluginCommand(
                verb, List.of(), null, false, "stdout", null, false, null, null, null, null, false, false, List.of(),
                false, false, true);
    }
}
