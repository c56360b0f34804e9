package dev.drover.local;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Predicate;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;
import org.eclipse.jetty.websocket.core.server.WebSocketNegotiator;

/**
 * A WebSocket upgrade of a path an aggregated API serves ({@code kubectl drover exec}), as kube-apiserver takes it:
 * the caller is authenticated and authorized for the GET it is ({@code get} on the subresource: kube-apiserver
 * authorizes a request to an aggregated API by its method), then the upgrade goes on to the backend
 * ({@link Aggregator#upgrade}), which decides the rest.
 */
final class AggregatedUpgrades implements WebSocketNegotiator {

    private final Authenticator authenticator;
    private final Authorizer authorizer;
    private final Aggregator aggregator;

    AggregatedUpgrades(Authenticator authenticator, Authorizer authorizer, Aggregator aggregator) {
        this.authenticator = authenticator;
        this.authorizer = authorizer;
        this.aggregator = aggregator;
    }

    /** The paths taken: those an APIService serves. */
    Predicate<String> paths() {
        return path -> aggregator.serviceFor(path) != null;
    }

    @Override
    public FrameHandler negotiate(ServerUpgradeRequest request, ServerUpgradeResponse response, Callback callback) {
        String path = request.getHttpURI().getPath();
        try {
            UserInfo user = authenticator.authenticate(request.getHeaders().get("Authorization"));
            RequestInfo info =
                    RequestInfo.of("GET", path, Query.parse(request.getHttpURI().getQuery()));
            Authorizer.Decision decision = authorizer.authorize(user, info);
            if (!decision.allowed()) {
                throw Forbidden.of(user, info, decision.reason());
            }
            ObjectNode service = aggregator.serviceFor(path);
            if (service == null) {
                throw new ApiFront.ApiError(404, "NotFound", "the server could not find the requested resource");
            }
            return aggregator.upgrade(request, response, callback, service, user);
        } catch (ApiFront.ApiError e) {
            refuse(response, callback, e.code, ResponseWriters.statusOf(e).toString());
            return null;
        }
    }

    /** Answers the upgrade with {@code status} and the JSON {@code body}, as any error of the server. */
    static void refuse(ServerUpgradeResponse response, Callback callback, int status, String body) {
        response.setStatus(status);
        response.getHeaders().put("Content-Type", "application/json");
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
    }
}
