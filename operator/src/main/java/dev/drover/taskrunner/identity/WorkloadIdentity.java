package dev.drover.taskrunner.identity;

import dev.drover.credentials.Credentials;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;

/**
 * The agent's part in its tasks' identities, the same for every task: where tokens and objects come from (the API
 * server, with the allocation's ServiceAccount), the tokens already minted, and how often referenced Secrets and
 * ConfigMaps are read again to notice changes.
 */
public final class WorkloadIdentity {

    /** How often a running task's Secrets and ConfigMaps are read again, unless the agent is told otherwise. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMinutes(1);

    private final Credentials source;
    private final CredentialFiles files;
    private final TokenCache tokens;
    private final Duration pollInterval;
    private final InstantSource clock;

    WorkloadIdentity(Credentials source, CredentialFiles files, Duration pollInterval, InstantSource clock) {
        this.source = Objects.requireNonNull(source, "source");
        this.files = files;
        this.tokens = new TokenCache(source, clock);
        this.pollInterval = pollInterval;
        this.clock = clock;
    }

    public static WorkloadIdentity of(Credentials source, Duration pollInterval, InstantSource clock) {
        return new WorkloadIdentity(source, new TaskDirFiles(), pollInterval, clock);
    }

    Credentials source() {
        return source;
    }

    CredentialFiles files() {
        return files;
    }

    TokenCache tokens() {
        return tokens;
    }

    Duration pollInterval() {
        return pollInterval;
    }

    InstantSource clock() {
        return clock;
    }
}
