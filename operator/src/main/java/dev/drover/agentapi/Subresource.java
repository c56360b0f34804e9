package dev.drover.agentapi;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The subresources of an allocation that the agent's API and the gateway serve, as users are granted them
 * ({@code allocations/log} of group {@link AgentProtocol#GROUP}, ...), with the HTTP method each is served for and the
 * RBAC verb its right is checked for.
 */
public enum Subresource {
    LOG("log"),
    STATS("stats"),
    SNAPSHOT("snapshot"),
    SIGNAL("signal"),
    EXEC("exec");

    /** The names, in the order discovery lists them. */
    public static final List<String> NAMES =
            Arrays.stream(values()).map(Subresource::apiName).toList();

    private final String apiName;

    Subresource(String apiName) {
        this.apiName = apiName;
    }

    /** The name in {@code allocations/NAME}. */
    public String apiName() {
        return apiName;
    }

    /** The subresource of that name, if there is one. */
    public static Optional<Subresource> named(String name) {
        return Arrays.stream(values()).filter(s -> s.apiName.equals(name)).findFirst();
    }

    /** {@link #named}, for a name the caller has already read as one of {@link #NAMES}. */
    public static Subresource of(String name) {
        return named(name).orElseThrow(() -> new IllegalArgumentException("no subresource " + name));
    }

    /**
     * The HTTP method it is served for: a signal acts, so it is a POST; an exec is a WebSocket upgrade, which is a GET;
     * the others read.
     */
    public String method() {
        return this == SIGNAL ? "POST" : "GET";
    }

    /**
     * The verb its right is checked for: {@code create} for what acts (a signal, which kube-apiserver authorizes as a
     * POST; an exec, which needs {@code create} as {@code pods/exec} does, whatever the upgrade's method), else
     * {@code get}.
     */
    public String verb() {
        return this == SIGNAL || this == EXEC ? "create" : "get";
    }

    /**
     * The verbs discovery lists: kube-apiserver authorizes a signal's POST as create, and lets an exec's WebSocket GET
     * through for get before the gateway checks it for create.
     */
    public List<String> discoveryVerbs() {
        return switch (this) {
            case SIGNAL -> List.of("create");
            case EXEC -> List.of("create", "get");
            default -> List.of("get");
        };
    }
}
