package dev.drover.agent;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import dev.drover.common.Backoff;
import dev.drover.state.StateDB;
import dev.drover.state.StateStoreException;
import dev.drover.state.StateStores;
import dev.drover.state.StoredLoad;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.slf4j.LoggerFactory;

/**
 * Entry point of {@code drover-agent.jar}: runs the agent (the default), or a
 * sub-command such as {@code state dump}. Exit codes: 0 after a clean stop
 * (SIGTERM), 1 when the agent cannot start, 2 for bad flags or settings.
 */
public final class Main {

    static final int EXIT_USAGE = 2;
    static final int EXIT_FAILED = 1;

    static final String USAGE = """
            usage: java -jar drover-agent.jar [FLAG]...
                   java -jar drover-agent.jar state dump --data-dir DIR
                   java -jar drover-agent.jar devices [--device-plugin NAME[:ARG]]... [--stats] ... (devices --help)
                   java -jar drover-agent.jar kubectl COMMAND ALLOC ... (kubectl --help)
                   java -jar drover-agent.jar gateway [--port N] [--tls-cert-file FILE] ... (gateway --help)

            With no command, runs the agent for this node until SIGTERM; tasks keep running when it stops.
            Flags take --flag VALUE or --flag=VALUE; every flag also has an environment form (NODE_NAME,
            DROVER_DATA_DIR, ...) and a key in the --config file: docs/configuration.md lists them all.

            """ + AgentFlags.help() + """

            Commands:
              kubectl ...   the kubectl drover plugin (operator/bin/kubectl-drover): a task's output, the
                            allocation's usage and status, from its agent (docs/api.md)
              gateway       the Drover gateway: serves the aggregated API agent.drover.dev through the
                            Kubernetes API server (docs/api.md)
              state dump    print the agent's local state store as JSON (safe while the agent runs);
                            DIR defaults to $DROVER_DATA_DIR
              devices       what the device plugins see on this node (GPUs, health, stats), without an API
                            server; -o json for scripts (docs/devices.md)
            """;

    private Main() {}

    public static void main(String[] args) {
        if (args.length >= 1 && args[0].equals("kubectl")) {
            dev.drover.cli.CliLogging.configure(List.of(args), System.getenv());
        }
        if (args.length >= 1 && args[0].equals("devices")) {
            setLogLevel(
                    "warn"); // the plugins' warnings (a GPU named in the settings that is not there), not their news
        }
        System.exit(run(args, System.getenv(), System.out, System.err));
    }

    /** Runs a command, or the agent until the JVM is asked to stop; returns the exit code. */
    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (args.length >= 1 && args[0].equals("kubectl")) {
            return dev.drover.cli.KubectlDrover.run(Arrays.copyOfRange(args, 1, args.length), out, err);
        }
        if (args.length >= 1 && args[0].equals("gateway")) {
            StopSignal stop = StopSignal.install();
            return dev.drover.gateway.Gateway.run(
                    Arrays.copyOfRange(args, 1, args.length), out, err, stop::await, Main::setLogLevel);
        }
        if (args.length >= 1 && args[0].equals("devices")) {
            return DevicesCommand.run(Arrays.copyOfRange(args, 1, args.length), env, out, err);
        }
        if (args.length >= 2 && args[0].equals("state") && args[1].equals("dump")) {
            return StateDumpCommand.run(Arrays.copyOfRange(args, 2, args.length), env, out, err);
        }
        if (args.length >= 1 && (args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h"))) {
            out.print(USAGE);
            return 0;
        }
        AgentConfig config;
        try {
            config = AgentConfig.load(List.of(args), env);
        } catch (ConfigException e) {
            err.println("drover-agent: " + e.getMessage());
            usage(err);
            return EXIT_USAGE;
        }
        setLogLevel(config.logLevel());
        return runAgent(config, err);
    }

    private static int runAgent(AgentConfig config, PrintStream err) {
        StopSignal stop = StopSignal.install(); // before the wait for the API server, which a stop ends
        ApiServerProbe probe;
        try {
            probe = new ApiServerProbe(
                    Agent.clientConfig(config.kubeconfig()), config.nodeName(), config.fieldSelector());
        } catch (IOException | RuntimeException e) {
            err.println("drover-agent: cannot read the Kubernetes client configuration: " + e.getMessage());
            return EXIT_FAILED;
        }
        StateDB state;
        try {
            state = StateStores.openAgents(config.dataDir());
        } catch (StateStoreException e) {
            err.println("drover-agent: the state store in " + config.dataDir() + " cannot be used: " + e.getMessage());
            return EXIT_FAILED;
        } catch (IOException e) {
            err.println("drover-agent: the data dir " + config.dataDir() + " cannot be used: " + e);
            return EXIT_FAILED;
        }
        // read and decoded while the API server is waited for: on a restart the store holds every allocation
        StoredLoad stored = StoredLoad.begin(state);
        try (probe) {
            ApiServerWait wait = new ApiServerWait(
                    probe,
                    Backoff.from(ApiServerWait.FIRST_PAUSE, ApiServerWait.MAX_PAUSE),
                    new SplittableRandom()::nextDouble,
                    LoggerFactory.getLogger(ApiServerWait.class)::warn,
                    LoggerFactory.getLogger(ApiServerWait.class)::info);
            if (!wait.await(stop.stopped())) {
                closeStore(state, stored);
                return 0; // stopped before it started
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeStore(state, stored);
            return EXIT_FAILED;
        }
        Agent agent;
        try {
            agent = Agent.start(config, state, stored);
        } catch (StateStoreException e) {
            err.println("drover-agent: the state store in " + config.dataDir() + " cannot be used: " + e.getMessage());
            closeStore(state, stored);
            return EXIT_FAILED;
        } catch (Exception e) {
            err.println("drover-agent: cannot start: " + e);
            LoggerFactory.getLogger(Main.class).error("cannot start", e);
            closeStore(state, stored);
            return EXIT_FAILED;
        }
        Optional<OldGenerationBound> bound = OldGenerationBound.start();
        stop.await();
        agent.close();
        bound.ifPresent(OldGenerationBound::close);
        return 0;
    }

    /** Closes a store the agent did not take (or closed already), once its read has ended either way. */
    private static void closeStore(StateDB state, StoredLoad stored) {
        try {
            stored.await();
        } catch (RuntimeException unread) {
            // the read failed: closing is all that is left
        }
        try {
            state.close();
        } catch (RuntimeException alreadyClosed) {
            // an agent that failed to start closed it
        }
    }

    static void setLogLevel(String level) {
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
            ctx.getLogger("dev.drover").setLevel(Level.toLevel(level, Level.INFO));
        }
    }

    static void usage(PrintStream err) {
        err.print(USAGE);
    }
}
