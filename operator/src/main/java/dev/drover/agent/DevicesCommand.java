package dev.drover.agent;

import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.FlagParser;
import dev.drover.cli.flags.HelpText;
import dev.drover.cli.flags.ParsedArgs;
import dev.drover.cli.flags.UsageError;
import dev.drover.common.Durations;
import dev.drover.common.UserText;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.InstanceStats;
import dev.drover.devices.DeviceManager;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * {@code drover-agent devices}: what the agent's device plugins see on this node, without an API server. Runs the
 * plugins the agent would run from the same flags, environment and configuration file, fingerprints once, prints the
 * devices (and a statistics sample with {@code --stats}), optionally watches them for a while, and closes the plugins.
 * Exit codes: 0 when every plugin found devices and answered, 1 when one failed or none is configured, 2 for a bad
 * command line or configuration.
 */
final class DevicesCommand {

    static final int EXIT_FAILED = 1;
    static final int EXIT_USAGE = 2;
    /** The longest {@code --watch}: this is a check, not a monitor. */
    static final Duration MAX_WATCH = Duration.ofMinutes(10);
    /** The longest one {@code awaitChange} waits, as the agent's device manager waits. */
    private static final Duration CHANGE_WAIT = DeviceManager.Timing.DEFAULT.changeWait();

    private static final String PROGRAM = "drover-agent devices";

    static final List<Flag> FLAGS = List.of(
            Flag.valued("--device-plugin", null, "NAME[:ARG]", "a plugin to run, as the agent's flag (repeatable)"),
            Flag.valued("--config", null, "FILE", "the agent's configuration file (devicePlugins, devicePluginConfig)"),
            Flag.on("--stats", null, "also read one statistics sample of each instance"),
            Flag.valued("--watch", null, "DURATION", "then print each change for this long (at most 10m), e.g. 30s"),
            Flag.valued("--output", "-o", "FORMAT", "text (default) or json"),
            FlagParser.HELP);

    static final String USAGE = """
            usage: java -jar drover-agent.jar devices [--device-plugin NAME[:ARG]]... [--config FILE] [--stats]
                                                      [--watch DURATION] [-o json|text]

            Runs the device plugins the agent would run with the same flags, environment (DROVER_DEVICE_PLUGINS,
            DROVER_CONFIG) and configuration file, and prints what they see: each plugin, its device groups with
            their attributes, each instance's health and place. Needs no API server. Exit code 0 when every
            plugin found devices, 1 when one failed or none is configured, 2 for a bad command line.

            """ + HelpText.flags(FLAGS) + """

            docs/devices.md ("Checking a node") describes both outputs.
            """;

    private final Duration callDeadline;
    private final UnaryOperator<DevicePlugins.Selection> plugins;
    private final PrintStream out;
    private final PrintStream err;

    private DevicesCommand(
            Duration callDeadline, UnaryOperator<DevicePlugins.Selection> plugins, PrintStream out, PrintStream err) {
        this.callDeadline = callDeadline;
        this.plugins = plugins;
        this.out = out;
        this.err = err;
    }

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        return run(args, env, out, err, DeviceManager.Timing.DEFAULT.call(), UnaryOperator.identity());
    }

    /**
     * As {@link #run(String[], Map, PrintStream, PrintStream)}, each plugin call bounded by {@code callDeadline}, and
     * each chosen plugin passed through {@code plugins} before it runs (tests give the fake plugin a clock of theirs).
     */
    static int run(
            String[] args,
            Map<String, String> env,
            PrintStream out,
            PrintStream err,
            Duration callDeadline,
            UnaryOperator<DevicePlugins.Selection> plugins) {
        return new DevicesCommand(callDeadline, plugins, out, err).run(List.of(args), env);
    }

    private record Options(
            List<String> plugins, Optional<Path> config, boolean stats, Optional<Duration> watch, boolean json) {}

    private int run(List<String> args, Map<String, String> env) {
        Options o;
        try {
            ParsedArgs a = FlagParser.parse(FLAGS, args, false);
            if (a.help()) {
                out.print(USAGE);
                return 0;
            }
            o = options(a);
        } catch (UsageError e) {
            err.println(PROGRAM + ": " + e.getMessage());
            err.print(USAGE);
            return EXIT_USAGE;
        }
        List<DevicePlugins.Selection> selections;
        try {
            selections =
                    DevicePluginSettings.choose(o.plugins(), env, AgentConfigFile.named(o.config(), env))
                            .selections()
                            .stream()
                            .map(plugins)
                            .toList();
        } catch (ConfigException | IllegalArgumentException e) {
            err.println(PROGRAM + ": " + e.getMessage());
            return EXIT_USAGE;
        }
        if (selections.isEmpty()) {
            err.println(PROGRAM + ": no device plugin is configured; name one with --device-plugin nvidia"
                    + " (or nvidia:LIBRARY, fake:FILE), DROVER_DEVICE_PLUGINS or devicePlugins in the --config file");
            return EXIT_FAILED;
        }
        return check(selections, o);
    }

    private static Options options(ParsedArgs a) throws UsageError {
        if (!a.positional().isEmpty()) {
            throw new UsageError(
                    "takes no arguments, not " + UserText.quote(a.positional().getFirst()));
        }
        String format = Optional.ofNullable(a.value("--output")).orElse("text");
        if (!format.equals("text") && !format.equals("json")) {
            throw new UsageError("-o " + UserText.quote(format) + " is not an output format: text or json");
        }
        Optional<Duration> watch = Optional.empty();
        String w = a.value("--watch");
        if (w != null) {
            Duration d;
            try {
                d = Durations.parse(w);
            } catch (IllegalArgumentException e) {
                throw new UsageError("--watch " + UserText.quote(w) + " is not a duration (such as 30s, 5m)");
            }
            if (d.isZero() || d.isNegative() || d.compareTo(MAX_WATCH) > 0) {
                throw new UsageError("--watch " + UserText.quote(w) + " must be longer than 0 and at most "
                        + Durations.format(MAX_WATCH));
            }
            watch = Optional.of(d);
        }
        return new Options(
                a.values("--device-plugin"),
                Optional.ofNullable(a.value("--config")).map(Path::of),
                a.has("--stats"),
                watch,
                format.equals("json"));
    }

    /** Opens every plugin, reports, watches if asked, and closes them all whatever happened. */
    private int check(List<DevicePlugins.Selection> selections, Options o) {
        List<PluginSession> open = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        try {
            List<PluginReport> reports = new ArrayList<>();
            Map<PluginSession, Fingerprint> seen = new LinkedHashMap<>();
            for (DevicePlugins.Selection sel : selections) {
                reports.add(report(sel, o.stats(), open, seen, failures));
            }
            out.print(o.json() ? DevicesJson.report(reports) + "\n" : DevicesText.report(reports, o.stats()));
            out.flush();
            if (failures.isEmpty() && o.watch().isPresent()) {
                watch(seen, o.watch().get(), o.json(), failures);
            }
        } finally {
            for (PluginSession s : open) {
                if (!s.closeAndJoin()) {
                    failures.add("the " + s.name() + " plugin did not close within "
                            + Durations.format(callDeadline.plus(PluginSession.JOIN_BOUND))
                            + "; a call may be stuck in its driver");
                }
            }
        }
        failures.forEach(f -> err.println(PROGRAM + ": " + f));
        return failures.isEmpty() ? 0 : EXIT_FAILED;
    }

    /** One plugin's report; a failure is added to {@code failures} and shown in the report too. */
    private PluginReport report(
            DevicePlugins.Selection sel,
            boolean withStats,
            List<PluginSession> open,
            Map<PluginSession, Fingerprint> seen,
            List<String> failures) {
        String name = sel.factory().name();
        PluginSession session = PluginSession.create(sel, callDeadline);
        open.add(session);
        String version = session.version();
        try {
            session.configure();
        } catch (PluginSession.Failure e) {
            failures.add(e.getMessage());
            return PluginReport.failed(name, version, sel.config(), e.getMessage());
        }
        Fingerprint fp;
        try {
            fp = session.fingerprint();
        } catch (PluginSession.Failure e) {
            failures.add(e.getMessage());
            return PluginReport.failed(name, version, sel.config(), e.getMessage());
        }
        seen.put(session, fp);
        Optional<String> error = Optional.empty();
        if (fp.unavailableReason().isPresent()) {
            error = Optional.of("the " + name + " plugin sees no devices: "
                    + fp.unavailableReason().get());
        } else if (fp.instances().isEmpty()) {
            error = Optional.of("the " + name + " plugin sees no devices (are they all left out by "
                    + DevicePluginSettings.KEY + "." + name + "?)");
        }
        Map<String, InstanceStats> stats = new LinkedHashMap<>();
        if (withStats && error.isEmpty()) {
            try {
                for (InstanceStats s : session.stats()) {
                    stats.putIfAbsent(s.id(), s);
                }
            } catch (PluginSession.Failure e) {
                error = Optional.of(e.getMessage());
            }
        }
        error.ifPresent(failures::add);
        return new PluginReport(name, version, sel.config(), Optional.of(fp), stats, error);
    }

    /**
     * Prints each change of every plugin's fingerprint for {@code length}, a thread a plugin (their waits are
     * independent), each ending with the watch or at its plugin's first failure.
     */
    private void watch(Map<PluginSession, Fingerprint> seen, Duration length, boolean json, List<String> failures) {
        if (!json) {
            out.println();
            out.println("watching for " + Durations.format(length) + ": each change as it comes");
        }
        long end = System.nanoTime() + length.toNanos();
        AtomicInteger changes = new AtomicInteger();
        ConcurrentLinkedQueue<String> failed = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        seen.forEach((session, first) -> threads.add(Thread.ofPlatform()
                .name("drover-devices-watch-" + session.name())
                .start(() -> {
                    try {
                        watchOne(session, first, end, json, changes);
                    } catch (PluginSession.Failure e) {
                        failed.add(e.getMessage());
                    }
                })));
        for (Thread t : threads) {
            try {
                t.join(); // each call of the loop is bounded by the session's deadline
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failed.add("interrupted while watching");
                break;
            }
        }
        failures.addAll(failed);
        if (!json) {
            out.println("watch ended after " + Durations.format(length) + ": " + changes.get() + " change(s)");
        }
    }

    private void watchOne(PluginSession session, Fingerprint first, long end, boolean json, AtomicInteger changes)
            throws PluginSession.Failure {
        Fingerprint seen = first;
        for (long left = end - System.nanoTime(); left > 0; left = end - System.nanoTime()) {
            Duration wait = Duration.ofNanos(left);
            Fingerprint now = session.awaitChange(seen, wait.compareTo(CHANGE_WAIT) < 0 ? wait : CHANGE_WAIT);
            Instant at = Instant.now();
            for (FingerprintChanges.Change c : FingerprintChanges.between(seen, now)) {
                out.println(
                        json ? DevicesJson.change(session.name(), at, c) : DevicesText.change(session.name(), at, c));
                changes.incrementAndGet();
            }
            out.flush();
            seen = now;
        }
    }
}
