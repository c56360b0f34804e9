package dev.drover.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * The plugin's own terminal is not a log: the libraries under it (fabric8's warning about the v1alpha1 API, Jetty,
 * Netty) log through SLF4J, and by default none of it is shown. {@code -v}/{@code --verbose} shows them as the
 * agent's logback configuration does; {@code DROVER_LOG=debug|info|warn|error} at that level, for every library.
 * Must run before anything asks SLF4J for a logger: the provider is chosen once per JVM.
 */
public final class CliLogging {

    static final String ENV = "DROVER_LOG";

    private CliLogging() {}

    /** Silences SLF4J for a {@code kubectl drover} run of {@code args}, unless they or {@code env} ask for logs. */
    public static void configure(List<String> args, Map<String, String> env) {
        String level = env.get(ENV);
        boolean verbose = false;
        for (String a : args) {
            if (a.equals("--")) {
                break; // exec's command line is not ours
            }
            verbose |= a.equals("-v") || a.equals("--verbose");
        }
        if (!verbose && (level == null || level.isBlank())) {
            // SLF4J's own no-operation provider: no logback, no logback.xml read, no lines
            System.setProperty("slf4j.provider", "org.slf4j.helpers.NOP_FallbackServiceProvider");
            System.setProperty("slf4j.internal.verbosity", "WARN"); // not "Attempting to load provider ..."
            return;
        }
        if (level != null && !level.isBlank() && LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
            Level l = Level.toLevel(level.trim().toUpperCase(Locale.ROOT), Level.DEBUG);
            var root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
            for (var logger : ctx.getLoggerList()) {
                if (logger != root) {
                    logger.setLevel(null); // the configuration's levels (io.fabric8 at WARN) give way
                }
            }
            root.setLevel(l);
        }
    }
}
