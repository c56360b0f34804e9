package dev.drover.httpapi;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.state.AllocId;
import java.net.InetAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Optional;

/**
 * What every request to the agent's API passes before it is served, a plain one or a WebSocket upgrade alike: a
 * path the API serves, read ({@link ApiRequest}); the method it is served for; the caller authenticated and
 * authorized by {@link KubernetesAuth} for the subresource's verb; the gateway's token only with the gateway's client
 * certificate ({@link GatewayTrust}); and the allocation running on this node.
 */
final class AgentGate {

    /** What the gate decided. */
    sealed interface Entry {}

    /** Turned away with an HTTP status and a message; {@code retryAfter} is zero unless the caller may retry. */
    record Refused(int status, String message, Duration retryAfter) implements Entry {
        Refused(int status, String message) {
            this(status, message, Duration.ZERO);
        }
    }

    /**
     * Let in: what is asked, by whom, and {@code user}, whom the request is for (the user the gateway names, else the
     * caller), which followed logs count against and events name.
     */
    record Admitted(
            ApiRequest request, KubernetesAuth.Caller caller, boolean fromGateway, String user, LocalAllocation local)
            implements Entry {}

    /** What the gate reads of a request: method, raw target, the headers it needs and the connection's peer. */
    record Asked(
            String method,
            String rawPath,
            String rawQuery,
            String authorization,
            String onBehalfOf,
            InetAddress remote,
            X509Certificate[] clientCertificates) {}

    private final KubernetesAuth auth;
    private final GatewayTrust gateway;
    private final LocalAllocations allocations;
    private final String node;

    AgentGate(KubernetesAuth auth, GatewayTrust gateway, LocalAllocations allocations, String node) {
        this.auth = auth;
        this.gateway = gateway;
        this.allocations = allocations;
        this.node = node;
    }

    Entry admit(Asked asked) {
        if (!ApiRequest.served(asked.rawPath())) {
            return new Refused(404, "no such API path " + asked.rawPath() + "; " + AgentProtocol.AGENT_ROUTES);
        }
        ApiRequest request;
        try {
            request = ApiRequest.parse(asked.rawPath(), asked.rawQuery());
        } catch (ApiRequest.BadRequest e) {
            return new Refused(400, e.getMessage());
        }
        if (!asked.method().equals(request.method())) {
            return new Refused(405, asked.method() + " is not served here; use " + request.method());
        }
        AllocId id = request.id();
        KubernetesAuth.Decision decision = auth.check(
                asked.authorization(),
                asked.remote(),
                id.namespace(),
                id.name(),
                request.verb(),
                request.subresource());
        if (decision instanceof KubernetesAuth.Decision.Refused r) {
            return new Refused(r.status(), r.message(), r.retryAfter());
        }
        KubernetesAuth.Caller caller = ((KubernetesAuth.Decision.Allowed) decision).caller();
        boolean fromGateway = gateway.names(caller);
        if (fromGateway) {
            Optional<String> refused = gateway.refusal(asked.clientCertificates());
            if (refused.isPresent()) {
                return new Refused(401, refused.get());
            }
        }
        Optional<LocalAllocation> local = allocations.find(id);
        if (local.isEmpty()) {
            return new Refused(404, "allocation " + id + " does not run on node " + node);
        }
        if (!fromGateway) {
            return new Admitted(request, caller, false, caller.user(), local.get());
        }
        // the gateway names the user of every signal and exec (its own reads, a disk it downloads, name none):
        // without one, or with one it cannot have sent, an act would run, and be audited, as the gateway itself
        if (asked.onBehalfOf() == null && request.verb().equals("get")) {
            return new Admitted(request, caller, true, caller.user(), local.get());
        }
        Optional<String> user = onBehalfOf(asked.onBehalfOf());
        if (user.isEmpty()) {
            return new Refused(
                    400,
                    "a request from the gateway names its user in " + AgentProtocol.ON_BEHALF_OF
                            + " (URL-encoded, at most " + AgentProtocol.MAX_ON_BEHALF_OF + " characters)");
        }
        return new Admitted(request, caller, true, user.get(), local.get());
    }

    /**
     * The user the gateway names, URL-decoded; empty when it is missing, too long or not URL-encoding. Its room: a
     * user name the gateway takes (1024 characters) URL-encoded, where a character may take 9.
     */
    static Optional<String> onBehalfOf(String onBehalfOf) {
        if (onBehalfOf == null || onBehalfOf.isEmpty() || onBehalfOf.length() > AgentProtocol.MAX_ON_BEHALF_OF) {
            return Optional.empty();
        }
        try {
            String user = URLDecoder.decode(onBehalfOf, StandardCharsets.UTF_8);
            return user.isEmpty() ? Optional.empty() : Optional.of(user);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
