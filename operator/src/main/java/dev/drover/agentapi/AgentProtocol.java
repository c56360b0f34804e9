package dev.drover.agentapi;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * What the agent's API, its clients and the gateway in front of it agree on: the agent's paths and the gateway's
 * (the aggregated API {@code agent.drover.dev/v1alpha1}), the header in which the gateway names its user, the token
 * audience, and the Node annotations by which an agent publishes where it serves.
 */
public final class AgentProtocol {

    /** On the Node: the port of the agent's HTTPS API. */
    public static final String PORT_ANNOTATION = "drover.dev/agent-api-port";
    /** On the Node: the SHA-256 of the agent's certificate, which clients pin. */
    public static final String CERTIFICATE_ANNOTATION = "drover.dev/agent-certificate-sha256";
    /** On the Node: the version of the agent that runs there ({@code kubectl drover version} reads it). */
    public static final String VERSION_ANNOTATION = "drover.dev/agent-version";
    /** On the Node: the git revision that agent was built from. */
    public static final String REVISION_ANNOTATION = "drover.dev/agent-revision";

    /** The only audience a token sent to an agent may have: tokens for the API server itself are refused. */
    public static final String AUDIENCE = "drover.dev/agent";

    /**
     * Sent by the gateway (which asks for every user with its own token): the user it asks for, percent-encoded.
     * Followed logs are counted per that user, so one user's follows do not use up everyone's share; from any other
     * caller it is ignored.
     */
    public static final String ON_BEHALF_OF = "X-Drover-On-Behalf-Of";
    /** The longest {@link #ON_BEHALF_OF} taken: 1024 characters, 9 each URL-encoded (a character of 3 UTF-8 bytes). */
    public static final int MAX_ON_BEHALF_OF = 9 * 1024;

    /** The aggregated API's group and version, which the gateway serves and RBAC rules name. */
    public static final String GROUP = "agent.drover.dev";

    public static final String VERSION = "v1alpha1";
    public static final String GATEWAY_PREFIX = "/apis/" + GROUP + "/" + VERSION;

    /**
     * The agent's paths: {@code /v1/allocations/NAMESPACE/NAME/} then {@code logs/TASK} (group 3), {@code stats} (4),
     * {@code snapshot} (5), {@code signal} (6) or {@code exec} (7).
     */
    public static final Pattern AGENT_ROUTE =
            Pattern.compile("^/v1/allocations/([^/]+)/([^/]+)/(?:logs/([^/]+)|(stats)|(snapshot)|(signal)|(exec))$");
    /** The agent's paths, for the answer to one it does not serve. */
    public static final String AGENT_ROUTES =
            "GET /v1/allocations/NAMESPACE/NAME/{logs/TASK,stats,snapshot}, POST .../signal?task=TASK&signal=NAME, GET .../exec?task=TASK&command=..."
                    + " (a WebSocket upgrade)";
    /** The agent's exec upgrades. */
    public static final String AGENT_EXEC = "^/v1/allocations/[^/]+/[^/]+/exec$";

    /** The gateway's paths: namespace (group 1), name (2) and subresource (3) of an allocation. */
    public static final Pattern GATEWAY_ROUTE =
            Pattern.compile("^/apis/agent\\.drover\\.dev/v1alpha1/namespaces/([^/]+)/allocations/([^/]+)/([^/]+)$");
    /** The gateway's exec upgrades. */
    public static final String GATEWAY_EXEC =
            "^/apis/agent\\.drover\\.dev/v1alpha1/namespaces/[^/]+/allocations/[^/]+/exec$";

    private AgentProtocol() {}

    /** The agent's path of an allocation's subresource, e.g. {@code agentPath("ns", "web", "logs/main")}. */
    public static String agentPath(String namespace, String name, String subresource) {
        return "/v1/allocations/" + encode(namespace) + "/" + encode(name) + "/" + subresource;
    }

    /** {@code s} URL-encoded as UTF-8, for a path segment, a query value or {@link #ON_BEHALF_OF}. */
    public static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
