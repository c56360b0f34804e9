package dev.drover.agent;

import dev.drover.state.StateDump;
import dev.drover.state.StateStoreException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;

/** {@code state dump --data-dir DIR}: the local store as JSON on stdout. */
final class StateDumpCommand {

    static final String DATA_DIR_ENV = "DROVER_DATA_DIR";
    static final int EXIT_USAGE = 2;
    static final String USAGE = """
            usage: java -jar drover-agent.jar state dump --data-dir DIR
              prints the agent's local state store as JSON (safe while the agent runs);
              DIR defaults to $DROVER_DATA_DIR
            """;

    private StateDumpCommand() {}

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        String dataDir = env.get(DATA_DIR_ENV);
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--data-dir") && i + 1 < args.length) {
                dataDir = args[++i];
            } else if (args[i].startsWith("--data-dir=")) {
                dataDir = args[i].substring("--data-dir=".length());
            } else {
                err.println("state dump: unknown argument '" + args[i] + "'");
                err.print(USAGE);
                return EXIT_USAGE;
            }
        }
        if (dataDir == null || dataDir.isBlank()) {
            err.println("state dump: --data-dir is required (or set " + DATA_DIR_ENV + ")");
            err.print(USAGE);
            return EXIT_USAGE;
        }
        try {
            out.println(StateDump.text(Path.of(dataDir)));
            out.flush();
            return 0;
        } catch (StateStoreException e) {
            err.println("state dump: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("state dump: could not print the store: " + e);
            return 1;
        }
    }
}
