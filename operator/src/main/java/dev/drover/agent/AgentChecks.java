package dev.drover.agent;

import dev.drover.taskrunner.checks.CheckProber;
import java.util.Optional;

/**
 * Where the agent's one {@link CheckProber} comes from: built once at start, given to every task runner (through
 * {@code AllocRunnerConfig.checks}), closed at shutdown after the runners stopped.
 */
final class AgentChecks {

    private AgentChecks() {}

    /**
     * The prober of this agent's tasks' checks; empty where this build has none, and then tasks' checks are not probed
     * (their status stays critical, "no probe has run yet", and an allocation with checks is never Ready).
     */
    static Optional<CheckProber> prober(AgentConfig config) {
        return Optional.empty();
    }
}
