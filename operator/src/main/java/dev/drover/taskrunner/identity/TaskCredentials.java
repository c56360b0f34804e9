package dev.drover.taskrunner.identity;

import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.EnvVar;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TokenProjection;
import dev.drover.common.UserText;
import dev.drover.credentials.CredentialException;
import dev.drover.state.AllocId;
import dev.drover.taskrunner.RunningTask;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import dev.drover.taskrunner.TaskRunningHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One task's credentials: before each start, its ServiceAccount token in {@code secrets/token} and the values of the
 * Secrets and ConfigMaps it refers to, as variables and files; while it runs, the token renewed at 80 % of its life
 * and the objects read again every poll interval, files swapped in place on a change and the task told as its
 * {@code onChange} says. Values live in memory only, never in the store.
 */
public final class TaskCredentials implements TaskPrestartHook, TaskRunningHook {

    private static final Logger LOG = LoggerFactory.getLogger(TaskCredentials.class);

    /** The variable naming the token's file. */
    public static final String TOKEN_PATH_VARIABLE = "DROVER_TOKEN_PATH";

    /** How long a stopping task waits for its refresher, which may be in the middle of a read. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    /**
     * Longest reason an event repeats: the API server's whole message (KubeCredentials keeps 500 characters of it)
     * and the names it comes with, since what the user must do is at its end (an admission policy's "label
     * namespace ...").
     */
    private static final int REASON_LIMIT = 900;

    private final WorkloadIdentity identity;
    private final AllocId alloc;
    private volatile boolean mountToken;
    /**
     * Whether the token is only there by default: one that cannot be had (a namespace not enabled for Drover, an API
     * server that cannot mint it) is then done without, said in an event, rather than failing a task that never
     * asked for it.
     */
    private volatile boolean tokenByDefault;

    private final String serviceAccount;
    private final Path taskDir;

    private volatile Task task;
    /** Whether a start of this runner set the credentials up (not so for a task a restarted agent reattached to). */
    private volatile boolean prepared;

    /** The variables' values the running process started with; null until known (a reattached task). */
    private volatile Map<Integer, String> started;

    private volatile String lastToken;
    /** Why an earlier start went without its token, as its event said; null when none did. */
    private String saidWithoutToken;

    /** This run's token could not be had and the allocation did not insist on one. */
    private volatile boolean withoutToken;

    private String lastFailure;
    private Thread refresher;

    /** The credentials of {@code task} of an allocation, whose directory is {@code taskDir}. */
    public static TaskCredentials of(
            WorkloadIdentity identity, AllocId alloc, AllocationSpec spec, Task task, Path taskDir) {
        return new TaskCredentials(identity, alloc, spec, task, taskDir);
    }

    private TaskCredentials(WorkloadIdentity identity, AllocId alloc, AllocationSpec spec, Task task, Path taskDir) {
        this.identity = identity;
        this.alloc = alloc;
        this.mountToken = spec.effectiveAutomountServiceAccountToken();
        this.tokenByDefault = spec.getAutomountServiceAccountToken() == null;
        this.serviceAccount = spec.effectiveServiceAccountName();
        this.task = task;
        this.taskDir = taskDir;
    }

    @Override
    public String name() {
        return "credentials";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        task = ctx.task();
        prepared = true;
        mountToken = ctx.spec().effectiveAutomountServiceAccountToken(); // an update may have turned it off
        tokenByDefault = ctx.spec().getAutomountServiceAccountToken() == null;
        started = null;
        lastToken = null; // written again at each start: the task may have removed it
        if (!needed()) {
            return;
        }
        withoutToken = false;
        for (int attempt = 0; ; attempt++) {
            try {
                if (mountToken && !withoutToken) {
                    try {
                        refreshToken();
                        ctx.env()
                                .put(
                                        TOKEN_PATH_VARIABLE,
                                        taskDir.resolve("secrets")
                                                .resolve("token")
                                                .toString());
                    } catch (CredentialException e) {
                        if (!tokenByDefault) {
                            throw e;
                        }
                        withoutToken = true;
                        String why = UserText.cut(String.valueOf(e.getMessage()), REASON_LIMIT);
                        if (!why.equals(saidWithoutToken)) { // a task restarting in a loop is told once
                            saidWithoutToken = why;
                            ctx.event(TaskEvent.of(
                                            TaskEventType.TaskSetup,
                                            identity.clock().instant())
                                    .withMessage(withoutTokenMessage(why)));
                        }
                    }
                }
                ObjectReads.Resolved resolved = refreshObjects(new ArrayList<>());
                if (resolved != null) {
                    ctx.valuesFrom().putAll(resolved.env());
                    started = resolved.env();
                }
                return;
            } catch (CredentialException e) {
                if (e.reason() != CredentialException.Reason.UNAVAILABLE
                        || attempt >= WorkloadIdentity.SETUP_RETRIES.size()) {
                    throw new TaskHookException(TaskEventType.SetupFailure, setupFailure(e), e);
                }
                WorkloadIdentity.pauseBeforeRetry(WorkloadIdentity.SETUP_RETRIES.get(attempt));
            } catch (IOException e) {
                throw new TaskHookException(
                        TaskEventType.SetupFailure,
                        "cannot write the task's credentials: " + UserText.cut(String.valueOf(e.getMessage()), 300),
                        e);
            }
        }
    }

    @Override
    public synchronized void running(RunningTask running) {
        if (!needed() || (prepared && !workWhileRunning()) || refresher != null) {
            return;
        }
        refresher = Thread.ofVirtual()
                .name("credentials-" + alloc + "/" + task.getName())
                .start(() -> refreshWhileRunning(running));
    }

    @Override
    public void stopped() throws InterruptedException {
        Thread t;
        synchronized (this) {
            t = refresher;
            refresher = null;
        }
        if (t != null) {
            t.interrupt();
            if (!t.join(STOP_WAIT)) {
                // a file system or API call that ignores interrupts: the task runner must not hang on it
                LOG.warn(
                        "task {}/{}: its credentials refresher is still busy after {}; left to end on its own",
                        alloc,
                        task.getName(),
                        STOP_WAIT);
            }
        }
    }

    private boolean needed() {
        return mountToken || task.usesObjects();
    }

    /** Whether there is anything to keep fresh while the task runs: a token it has, or objects it reads. */
    private boolean workWhileRunning() {
        return (mountToken && !withoutToken) || task.usesObjects();
    }

    private void refreshWhileRunning(RunningTask running) {
        try {
            if (!prepared) {
                refresh(running, true); // a restarted agent: a fresh token now, files checked against the objects
            }
            while (workWhileRunning()) {
                pauseUntil(nextRefresh());
                refresh(running, false);
            }
        } catch (InterruptedException stopped) {
            // the task ended or the runner stopped watching it
        }
    }

    /** Renews the token if due, reads the objects again, and tells the task of what changed. */
    private void refresh(RunningTask running, boolean reattached) {
        try {
            Map<Integer, String> before = started;
            if (mountToken && !withoutToken) {
                try {
                    refreshToken();
                } catch (CredentialException e) {
                    if (!tokenByDefault || lastToken != null) {
                        throw e;
                    }
                    withoutToken = true; // reattached in a namespace whose tokens are refused: as a start would
                    LOG.debug("task {}/{}: no ServiceAccount token: {}", alloc, task.getName(), e.getMessage());
                }
            }
            List<String> changed = new ArrayList<>();
            ObjectReads.Resolved resolved = refreshObjects(changed);
            if (resolved != null) {
                if (before != null && !before.equals(resolved.env())) {
                    changed.add("variables " + changedVariables(before, resolved.env()));
                }
                started = resolved.env();
            }
            lastFailure = null;
            if (!changed.isEmpty()) {
                onChange(running, String.join("; ", changed), reattached);
            }
        } catch (CredentialException | IOException e) {
            String message = e instanceof CredentialException c
                    ? c.getMessage()
                    : "cannot write the task's credentials: " + e.getMessage();
            message = UserText.cut(String.valueOf(message), REASON_LIMIT);
            if (!message.equals(lastFailure)) {
                lastFailure = message;
                LOG.warn("task {}/{}: credentials not refreshed: {}", alloc, task.getName(), message);
                running.event(TaskEvent.of(
                                TaskEventType.CredentialRefreshFailed,
                                identity.clock().instant())
                        .withMessage(message + "; the task keeps what it had"));
            }
        }
    }

    /** Writes the task's token if it was renewed since it was last written. */
    private void refreshToken() throws CredentialException, IOException {
        String token = identity.tokens().get(fileTokenKey(task)).token();
        if (!token.equals(lastToken)) {
            identity.files().writeToken(taskDir, token.getBytes(StandardCharsets.US_ASCII));
            lastToken = token;
        }
    }

    /** Writes the objects' files; adds what changed to {@code changed}; null when the task refers to none. */
    private ObjectReads.Resolved refreshObjects(List<String> changed) throws CredentialException, IOException {
        Task t = task;
        if (!t.usesObjects()) {
            return null;
        }
        ObjectReads.Resolved resolved = identity.readAs(
                alloc.namespace(),
                serviceAccount,
                token -> ObjectReads.resolve(identity.source(), alloc.namespace(), token, t));
        for (Map.Entry<String, Map<String, FileContent>> dir : resolved.files().entrySet()) {
            if (identity.files().project(taskDir, dir.getKey(), dir.getValue())) {
                changed.add("files in " + dir.getKey());
            }
        }
        return resolved;
    }

    private void onChange(RunningTask running, String what, boolean reattached) {
        String reason = "a Secret or ConfigMap it uses changed (" + what + ")"
                + (reattached ? " while the agent was away" : "");
        Task t = task;
        switch (t.effectiveOnChange()) {
            case Restart -> running.restart(reason);
            case Signal -> running.signal(t.getChangeSignal(), reason);
            case Noop -> LOG.info("task {}/{}: {}; onChange is Noop", alloc, t.getName(), reason);
        }
    }

    /** The earlier of the token's renewal and the next read of the objects. */
    private Instant nextRefresh() {
        Instant now = identity.clock().instant();
        Instant next = task.usesObjects() ? now.plus(identity.pollInterval()) : null;
        if (mountToken && !withoutToken) {
            Instant renew = identity.tokens().renewAt(fileTokenKey(task));
            if (renew != null && (next == null || renew.isBefore(next))) {
                next = renew;
            }
        }
        return next != null ? next : now.plus(identity.pollInterval());
    }

    private TokenCache.Key fileTokenKey(Task t) {
        TokenProjection p = t.getServiceAccountToken();
        return new TokenCache.Key(
                alloc.namespace(),
                serviceAccount,
                TokenProjection.effectiveAudience(p),
                TokenProjection.effectiveLife(p).toSeconds());
    }

    /** Objects are read with a token for the API server itself, whatever audience the task's own token has. */
    private String setupFailure(CredentialException e) {
        String m = UserText.cut(String.valueOf(e.getMessage()), REASON_LIMIT);
        if (e.reason() == CredentialException.Reason.UNAVAILABLE) {
            return "the API server could not be reached for the task's credentials: " + m;
        }
        return m;
    }

    /** The names (never the values) of the variables whose values differ. */
    private String changedVariables(Map<Integer, String> before, Map<Integer, String> after) {
        List<EnvVar> env = task.getEnv() == null ? List.of() : task.getEnv();
        List<String> names = new ArrayList<>();
        for (int i = 0; i < env.size(); i++) {
            if (!java.util.Objects.equals(before.get(i), after.get(i))) {
                names.add(env.get(i).getName());
            }
        }
        return String.join(", ", names);
    }

    private void pauseUntil(Instant when) throws InterruptedException {
        Duration wait = Duration.between(identity.clock().instant(), when);
        if (wait.isPositive()) {
            Thread.sleep(wait);
        }
    }

    /**
     * The without-token message, one string for every task told the same refusal: a namespace's tasks are all told the
     * same some hundred characters, and a node runs thousands of tasks (each keeps its newest events).
     */
    private static final LastText WITHOUT_TOKEN = new LastText();

    static String withoutTokenMessage(String why) {
        return WITHOUT_TOKEN.share("Starting without a ServiceAccount token: " + why
                + " (set automountServiceAccountToken: false if the task needs none)");
    }

    /** The last text given, returned again for an equal one: many equal texts in a row are held once. */
    static final class LastText {
        private volatile String last = "";

        String share(String text) {
            String known = last;
            if (known.equals(text)) {
                return known;
            }
            last = text;
            return text;
        }
    }
}
