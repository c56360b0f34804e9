package dev.drover.driver.mock;

import dev.drover.api.Signals;
import dev.drover.common.ConfigReader;
import dev.drover.common.UserText;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The mock driver's config, every option docs/drivers.md lists. Null durations mean "not given". */
record MockConfig(
        Duration runFor,
        int exitCode,
        String startError,
        boolean startErrorRecoverable,
        Duration startBlockFor,
        Duration killAfter,
        String stdoutString,
        int stdoutRepeat,
        Duration stdoutRepeatDuration,
        String exitOnSignal,
        String signalError,
        Map<String, MockExec.Script> exec) {

    /** The parsed config and every problem found; the config is meaningful only when there are none. */
    record Parsed(MockConfig config, List<String> problems) {}

    static Parsed parse(Map<String, Object> raw) {
        ConfigReader r = new ConfigReader(raw);
        Duration runFor = r.duration("runFor");
        Integer exitCode = r.integer("exitCode");
        String startError = r.string("startError");
        Boolean recoverable = r.bool("startErrorRecoverable");
        Duration startBlockFor = r.duration("startBlockFor");
        Duration killAfter = r.duration("killAfter");
        String stdout = r.string("stdoutString");
        Integer repeat = r.integer("stdoutRepeat");
        Duration repeatEvery = r.duration("stdoutRepeatDuration");
        String exitOnSignal = r.string("exitOnSignal");
        String signalError = r.string("signalError");
        Map<String, MockExec.Script> exec = MockExec.parse(r, r.map("exec"));
        if (exitOnSignal != null && !Signals.isKnown(exitOnSignal)) {
            r.problem(
                    "config.exitOnSignal: " + UserText.quote(exitOnSignal) + " is not a signal (e.g. SIGHUP, SIGUSR1)");
        }
        if (repeat != null && repeat < 0) {
            r.problem("config.stdoutRepeat: " + repeat + " is negative");
        }
        if (repeat != null && repeat > 0 && repeatEvery == null) {
            r.problem("config.stdoutRepeatDuration: is required with stdoutRepeat (how long between repeats)");
        }
        if ((repeat != null || repeatEvery != null) && stdout == null) {
            r.problem("config.stdoutString: is required with stdoutRepeat and stdoutRepeatDuration");
        }
        if (recoverable != null && startError == null) {
            r.problem("config.startErrorRecoverable: only means something with startError");
        }
        MockConfig c = new MockConfig(
                runFor,
                exitCode == null ? 0 : exitCode,
                startError,
                Boolean.TRUE.equals(recoverable),
                startBlockFor,
                killAfter,
                stdout,
                repeat == null ? 0 : repeat,
                repeatEvery,
                exitOnSignal == null || !Signals.isKnown(exitOnSignal) ? null : Signals.canonical(exitOnSignal),
                signalError,
                exec);
        return new Parsed(c, r.problems());
    }
}
