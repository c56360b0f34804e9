package dev.drover.agent;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Map;

/**
 * Entry point of {@code drover-agent.jar}: dispatches sub-commands. Running
 * the agent itself is not implemented yet, so anything but a known
 * sub-command prints usage and exits 2.
 */
public final class Main {

    static final int EXIT_USAGE = 2;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.getenv(), System.out, System.err));
    }

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        if (args.length >= 2 && args[0].equals("state") && args[1].equals("dump")) {
            return StateDumpCommand.run(Arrays.copyOfRange(args, 2, args.length), env, out, err);
        }
        usage(err);
        return EXIT_USAGE;
    }

    static void usage(PrintStream err) {
        err.println("usage: java -jar drover-agent.jar state dump --data-dir DIR");
        err.println("  state dump   print the agent's local state store as JSON (safe while the agent runs);");
        err.println("               DIR defaults to $" + StateDumpCommand.DATA_DIR_ENV);
    }
}
