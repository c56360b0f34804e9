package dev.drover.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The agent's ahead-of-time cache in a bench run: with {@code --aot} a training run records one first and the
 * measured agent starts with it; with {@code --aot-out} the measured agent records its own as it exits, which takes
 * a while, and the run fails when no cache was left.
 */
final class AotCache {

    /** How long an agent recording its AOT cache may take to exit: it assembles the cache first. */
    static final Duration ASSEMBLY_WAIT = Duration.ofMinutes(10);
    /** The heap of an agent recording its AOT cache. */
    static final String RECORDING_HEAP = "-Xmx2g";

    private AotCache() {}

    /**
     * The measured agent's JVM options: {@code agentJvm}, with a cache trained in {@code work} under {@code --aot},
     * and recording one under {@code --aot-out}.
     */
    static List<String> agentJvm(BenchOptions options, ChildJvms jvms, Path work, List<String> agentJvm)
            throws IOException, InterruptedException {
        if (options.aot()) {
            agentJvm = new ArrayList<>(agentJvm);
            agentJvm.add("-XX:AOTCache=" + train(options, jvms, work, agentJvm));
        }
        if (options.aotOut() != null) {
            agentJvm = new ArrayList<>(agentJvm);
            // a heap that fits compressed object pointers, as every agent under a memory limit below about 43 GB
            // runs: a cache recorded without them (a heap of a large machine's RAM) is refused by those agents
            agentJvm.add(RECORDING_HEAP);
            agentJvm.add("-XX:AOTCacheOutput=" + options.aotOut());
        }
        return agentJvm;
    }

    /** How long the measured agent may take to stop: an agent recording its AOT cache assembles it as it exits. */
    static Duration stopWait(BenchOptions options) {
        return options.aotOut() == null ? ChildJvms.STOP_WAIT : ASSEMBLY_WAIT;
    }

    /**
     * {@code --aot}: a training run of the agent (its own API server and data, up to
     * {@link BenchOptions#AOT_TRAINING_ALLOCS} allocations of this run's shape created, running and deleted) that
     * records the JVM's ahead-of-time cache as the agent exits; returns the cache.
     */
    private static Path train(BenchOptions options, ChildJvms jvms, Path work, List<String> agentJvm)
            throws IOException, InterruptedException {
        Path cache = work.resolve("agent.aot");
        List<String> args = new ArrayList<>(List.of(
                "--allocs",
                Integer.toString(Math.min(options.allocs(), BenchOptions.AOT_TRAINING_ALLOCS)),
                "--tasks",
                Integer.toString(options.tasks()),
                "--driver",
                options.driver(),
                "--events",
                options.taskEvents(),
                "--delete",
                "--agent-jar",
                options.agentJar().toString(),
                "--agent-jvm",
                String.join(" ", agentJvm),
                "--aot-out",
                cache.toString()));
        if (options.nodeSharing() != null) {
            args.addAll(List.of("--node-sharing", options.nodeSharing()));
        } else {
            args.addAll(List.of("--kube-version", options.kubeVersion()));
        }
        Path log = work.resolve("aot-training.log");
        int exit = jvms.benchChild(args, log);
        if (exit != 0 || !Files.isRegularFile(cache)) {
            throw new IOException(
                    "the agent's AOT training run (exit " + exit + ") recorded no cache; its log: " + log);
        }
        return cache;
    }

    /**
     * Whether the agent of an {@code --aot-out} run left its cache: 0 if so, else 1 with one line on {@code err}
     * saying so. {@code agentEnded}: whether the agent ended when asked to; {@code agentLog}: where it logged.
     */
    static int recorded(Path cache, boolean agentEnded, Path agentLog, PrintStream err) throws IOException {
        if (!agentEnded) {
            Files.deleteIfExists(cache); // what a killed assembly left is no cache
            err.println("bench: the agent did not finish its ahead-of-time cache within " + ASSEMBLY_WAIT.toMinutes()
                    + " minutes (its log: " + agentLog + ")");
            return 1;
        }
        if (Files.isRegularFile(cache, java.nio.file.LinkOption.NOFOLLOW_LINKS) && Files.size(cache) > 0) {
            return 0;
        }
        err.println("bench: the agent recorded no ahead-of-time cache at " + cache + " (its log: " + agentLog + ")");
        return 1;
    }
}
