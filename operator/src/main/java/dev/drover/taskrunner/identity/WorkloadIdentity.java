package dev.drover.taskrunner.identity;

import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TokenProjection;
import dev.drover.credentials.CredentialException;
import dev.drover.credentials.Credentials;
import dev.drover.taskrunner.TaskHookException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;

/**
 * The agent's part in its tasks' identities, the same for every task: where tokens and objects come from (the API
 * server, with the allocation's ServiceAccount), the tokens already minted, and how often referenced Secrets and
 * ConfigMaps are read again to notice changes.
 */
public final class WorkloadIdentity {

    /** A refused read forgets a reading token older than this: it may predate the RBAC that now allows it. */
    static final Duration STALE_TOKEN_AGE = Duration.ofMinutes(1);

    /** How long a prestart read waits between tries while the API server cannot be reached: then it fails. */
    static final List<Duration> SETUP_RETRIES =
            List.of(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4));

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

    /** Reads objects of {@code namespace} with a token of its {@code serviceAccount}. */
    @FunctionalInterface
    interface Read<T> {
        T with(String token) throws CredentialException;
    }

    /**
     * What {@code read} gets with the ServiceAccount's token for reading objects; a refusal forgets that token when
     * it is older than {@link #STALE_TOKEN_AGE}, so the next try asks the API server again under today's RBAC.
     */
    <T> T readAs(String namespace, String serviceAccount, Read<T> read) throws CredentialException {
        TokenCache.Key key =
                new TokenCache.Key(namespace, serviceAccount, null, TokenProjection.DEFAULT_EXPIRATION_SECONDS);
        String token = tokens.get(key).token();
        try {
            return read.with(token);
        } catch (CredentialException e) {
            if (e.reason() == CredentialException.Reason.FORBIDDEN) {
                tokens.forgetIfOlder(key, STALE_TOKEN_AGE);
            }
            throw e;
        }
    }

    /** Waits {@code d} before a prestart read tries again; an interrupt fails the task's setup. */
    static void pauseBeforeRetry(Duration d) throws TaskHookException {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TaskHookException(TaskEventType.SetupFailure, "interrupted while waiting for the API server");
        }
    }
}
