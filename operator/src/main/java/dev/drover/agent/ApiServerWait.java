package dev.drover.agent;

import dev.drover.common.Backoff;
import dev.drover.common.Durations;
import dev.drover.common.UserText;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import javax.net.ssl.SSLException;

/**
 * Before the agent starts, it waits for the API server: it asks once, and while no answer comes (or one that
 * refuses the agent) it says why in one line, waits a capped, jittered, growing pause and asks again, until the API
 * server answers or the agent is stopped. Nothing else of the agent starts meanwhile, so it has nothing to tear
 * down when stopped.
 */
final class ApiServerWait {

    static final Duration FIRST_PAUSE = Duration.ofSeconds(2);
    static final Duration MAX_PAUSE = Duration.ofSeconds(30);
    /** How long a try may take to connect, and then to be answered. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    /** The longest one try is waited for. */
    static final Duration TRY_LIMIT = CONNECT_TIMEOUT.plus(REQUEST_TIMEOUT).plusSeconds(5);

    /** What the API server answered: its HTTP status and, for an error, its Status message (cut). */
    record Answer(int code, String message) {
        boolean ok() {
            return code >= 200 && code < 300;
        }
    }

    /** One try at the API server ({@link ApiServerProbe}). */
    interface Probe {
        /** The API server's address, as messages name it. */
        String server();

        /** Completes with the answer, or exceptionally with why none came; cancelling it ends the try. */
        CompletableFuture<Answer> ask();
    }

    private final Probe probe;
    private final Backoff first;
    private final DoubleSupplier random;
    private final Consumer<String> warn;
    private final Consumer<String> info;
    private final Duration tryLimit;

    /**
     * @param random in [0, 1): each pause is between half the back-off's and all of it
     * @param warn   told each failed try's line
     * @param info   told once the API server answered after failed tries
     */
    ApiServerWait(Probe probe, Backoff first, DoubleSupplier random, Consumer<String> warn, Consumer<String> info) {
        this(probe, first, random, warn, info, TRY_LIMIT);
    }

    /** @param tryLimit the longest one try is waited for */
    ApiServerWait(
            Probe probe,
            Backoff first,
            DoubleSupplier random,
            Consumer<String> warn,
            Consumer<String> info,
            Duration tryLimit) {
        this.tryLimit = tryLimit;
        this.probe = probe;
        this.first = first;
        this.random = random;
        this.warn = warn;
        this.info = info;
    }

    /** Returns true once the API server answered the agent; false when {@code stopped} completed first. */
    boolean await(CompletableFuture<?> stopped) throws InterruptedException {
        Backoff pause = first;
        for (int tries = 1; ; tries++) {
            if (stopped.isDone()) {
                return false;
            }
            CompletableFuture<Answer> answer = probe.ask();
            try {
                // the probe's own timeouts end a try sooner; this bound holds should they not
                CompletableFuture.anyOf(answer, stopped).get(tryLimit.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException | CancellationException e) {
                // the answer's failure is read below; a stop's is a stop
            } catch (TimeoutException e) {
                answer.cancel(true); // read below as no answer
            }
            if (stopped.isDone()) {
                answer.cancel(true);
                return false;
            }
            String problem = problem(answer);
            if (problem == null) {
                if (tries > 1) {
                    info.accept("drover: reached the Kubernetes API server at " + probe.server() + " after " + tries
                            + " tries");
                }
                return true;
            }
            Duration wait = jittered(pause.current());
            warn.accept("drover: " + problem + "; retrying in " + Durations.format(wait));
            pause = pause.next();
            try {
                stopped.get(wait.toNanos(), TimeUnit.NANOSECONDS);
                return false;
            } catch (TimeoutException e) {
                // the pause is over
            } catch (ExecutionException | CancellationException e) {
                return false;
            }
        }
    }

    private Duration jittered(Duration pause) {
        double r = Math.min(Math.max(random.getAsDouble(), 0), 1);
        return Duration.ofMillis(Math.round(pause.toMillis() * (0.5 + r / 2)));
    }

    /** Why {@code answer} does not let the agent start, or null when it does. */
    private String problem(CompletableFuture<Answer> answer) {
        Answer a;
        try {
            a = answer.getNow(null);
        } catch (CancellationException e) {
            return "cannot reach the Kubernetes API server at " + probe.server() + " (no answer within "
                    + Durations.format(tryLimit) + ")";
        } catch (RuntimeException e) { // CompletionException: no answer came
            return "cannot reach the Kubernetes API server at " + probe.server() + " (" + unreachable(e) + ")";
        }
        if (a == null) {
            return "cannot reach the Kubernetes API server at " + probe.server() + " (no answer)";
        }
        if (a.ok()) {
            return null;
        }
        String said = a.message().isEmpty() ? "" : ": " + a.message();
        return switch (a.code()) {
            case 401 ->
                "the Kubernetes API server at " + probe.server() + " does not accept the agent's credentials (401"
                        + " Unauthorized" + said + "): check the token or client certificate its kubeconfig names";
            case 403 ->
                "the Kubernetes API server at " + probe.server() + " does not let the agent list Allocations (403"
                        + " Forbidden" + said + "): check the agent's ClusterRole and its binding";
            case 404 ->
                "the Kubernetes API server at " + probe.server() + " has no Allocation resource (404" + said
                        + "): install the CRD allocations.drover.dev";
            default ->
                "the Kubernetes API server at " + probe.server() + " answered HTTP " + a.code()
                        + (said.isEmpty() ? "" : " (" + a.message() + ")");
        };
    }

    /** "connection refused", "connection timed out", ... from the exception chain of a failed try. */
    static String unreachable(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof HttpConnectTimeoutException) {
                return "connection timed out after " + Durations.format(CONNECT_TIMEOUT);
            }
            if (t instanceof HttpTimeoutException) {
                return "no answer within " + Durations.format(REQUEST_TIMEOUT);
            }
            if (t instanceof ConnectException) {
                return "connection refused";
            }
            if (t instanceof NoRouteToHostException) {
                return "no route to host";
            }
            if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) {
                return "unknown host";
            }
            if (t instanceof SSLException) {
                return "TLS failed: " + text(t);
            }
        }
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + text(root));
    }

    private static String text(Throwable t) {
        return t.getMessage() == null ? "" : UserText.cut(t.getMessage().replaceAll("\\p{Cntrl}", " "), 200);
    }
}
