package dev.drover.httpapi;

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

    /** The header that names the user the gateway asks for ({@link AgentApi#ON_BEHALF_OF}). */
    static final String ON_BEHALF_OF = "X-Drover-On-Behalf-Of";

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
            return new Refused(404, "no such API path " + asked.rawPath() + "; " + ApiRequest.ROUTES);
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
        String user = onBehalfOf(caller.user(), fromGateway ? asked.onBehalfOf() : null);
        return new Admitted(request, caller, fromGateway, user, local.get());
    }

    /** Whom a request is for: the user the gateway names, else the caller. */
    static String onBehalfOf(String caller, String onBehalfOf) {
        if (onBehalfOf == null || onBehalfOf.isEmpty() || onBehalfOf.length() > 1024) {
            return caller;
        }
        try {
            return URLDecoder.decode(onBehalfOf, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return onBehalfOf;
        }
    }
}
