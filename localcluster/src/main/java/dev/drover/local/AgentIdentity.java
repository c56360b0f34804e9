package dev.drover.local;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.authentication.BoundObjectReference;
import io.fabric8.kubernetes.api.model.authentication.BoundObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's identity on the local cluster, as a real install gives it: the chart's ServiceAccount, ClusterRoles,
 * Roles and their bindings, and its ValidatingAdmissionPolicies and their bindings (which keep each agent to its own
 * node), rendered from the chart itself ({@code charts/drover}, with helm-java, as {@code helm
 * template} renders them: nothing is copied), applied by the administrator; for each node the DaemonSet's Pod there
 * ({@link #agentPod}, admitted by the local kubelet) and a token of that ServiceAccount bound to that Pod, minted
 * with the TokenRequest API, in a kubeconfig of its own, and a second such token for audience {@value #PEER_AUDIENCE} that the agent shows other nodes' agents. An
 * agent run with that kubeconfig can do exactly what the chart grants it, so a permission the chart lacks fails here
 * as on a real cluster.
 */
public final class AgentIdentity {

    /** The release and namespace the chart is rendered for, as docs/install.md installs it. */
    public static final String RELEASE = "drover";

    public static final String NAMESPACE = "drover-system";

    /** How long a minted token lives: a projected token's default; {@link Renewal} mints the next one in time. */
    static final Duration TOKEN_LIFETIME = Duration.ofHours(1);

    /**
     * What the agent is and may do: its RBAC, and the admission policies that keep it to its own node (and, from
     * Kubernetes 1.36, the one that puts its finalizer on each Allocation at create).
     */
    private static final Set<String> IDENTITY_KINDS = Set.of(
            "ServiceAccount",
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding");

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
    private static final KubernetesSerialization YAML = new KubernetesSerialization();
    private static final Logger LOG = LoggerFactory.getLogger(AgentIdentity.class);

    private final LocalApiServer server;
    private final String serviceAccount;
    private final String rendered;
    /** The agent's Pod on each node that has one ({@link #agentPod}). */
    private final java.util.Map<String, AgentPod> pods = new java.util.concurrent.ConcurrentHashMap<>();

    private AgentIdentity(LocalApiServer server, String serviceAccount, String rendered) {
        this.server = server;
        this.serviceAccount = serviceAccount;
        this.rendered = rendered;
    }

    /**
     * Renders the chart at {@code chart} for the server's Kubernetes version and applies its RBAC objects to the
     * server as its administrator, and its node confinement policies (again on a second call: applying is
     * idempotent).
     */
    public static AgentIdentity install(LocalApiServer server, Path chart) {
        if (!Files.isRegularFile(chart.resolve("Chart.yaml"))) {
            throw new IllegalArgumentException(
                    "no Helm chart at " + chart.toAbsolutePath() + " (the Drover chart is charts/drover)");
        }
        String rendered = new Helm(chart)
                .template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(server.kubeVersion() + ".0")
                // before 1.30 there is no ValidatingAdmissionPolicy v1, and the chart must be told to go without
                .set(
                        "nodeConfinement.enabled",
                        KubeVersion.parse(server.kubeVersion()).minor() >= 30)
                // before 1.31 this server selects custom resources by metadata fields only (as a 1.30 cluster
                // without its feature gate), and the chart refuses a field selector it could not serve
                .set(
                        "agent.config.fieldSelector",
                        KubeVersion.parse(server.kubeVersion()).minor() >= 31)
                .call();
        KubernetesClient admin = server.client();
        admin.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(NAMESPACE)
                        .endMetadata()
                        .build())
                .createOr(NonDeletingOperation::update);
        String serviceAccount = null;
        for (HasMetadata object : identityObjects(rendered)) {
            admin.resource(object).createOr(NonDeletingOperation::update);
            if (object instanceof ServiceAccount sa && !LocalGateway.isGateway(sa)) {
                serviceAccount = sa.getMetadata().getName();
            }
        }
        if (serviceAccount == null) {
            throw new IllegalStateException("the chart at " + chart + " renders no ServiceAccount");
        }
        return new AgentIdentity(server, serviceAccount, rendered);
    }

    /**
     * Runs the chart's gateway in this process, as its Deployment would run it, and registers its APIService: the
     * aggregated API {@code agent.drover.dev} (task logs and usage through the API server) then works. Its files (the
     * chart's certificate, its tokens) go to {@code dir}.
     */
    public LocalGateway startGateway(Path dir) throws IOException {
        return LocalGateway.start(this, server, rendered, dir);
    }

    /**
     * The agent's flags for the gateway that {@link #startGateway} runs with files in {@code gatewayDir}: the user its
     * token names, and the file its client certificate's CA is written to when it starts (an agent started before
     * reads it when it appears, as it reads a ConfigMap volume updated in place).
     */
    public List<String> gatewayArgs(Path gatewayDir) {
        return List.of(
                "--gateway-user",
                LocalGateway.user(rendered),
                "--gateway-ca-file",
                gatewayDir.resolve(LocalGateway.CA_FILE).toString());
    }

    /** The rendered objects that make up the agent's identity, rights and confinement, in the chart's order. */
    static List<HasMetadata> identityObjects(String rendered) {
        List<HasMetadata> out = new ArrayList<>();
        for (String document : DOCUMENT_SEPARATOR.split(rendered)) {
            if (document.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                continue;
            }
            HasMetadata object = YAML.unmarshal(document, HasMetadata.class);
            if (IDENTITY_KINDS.contains(object.getKind())) {
                out.add(object);
            }
        }
        return out;
    }

    /** The user the agent's requests are made as: {@code system:serviceaccount:drover-system:drover}. */
    public String username() {
        return "system:serviceaccount:" + NAMESPACE + ":" + serviceAccount;
    }

    /**
     * The agent's Pod on a node, as the chart's DaemonSet has one on each: what the agent's {@code --pod-name} and
     * {@code --pod-namespace} name, and what its tokens are bound to.
     *
     * @param name      the Pod's name, {@code <daemonset>-} and five random characters, as the DaemonSet controller
     *                  names it
     * @param namespace {@value #NAMESPACE}
     * @param uid       the Pod's uid
     * @param node      the node it is bound to
     */
    public record AgentPod(String name, String namespace, String uid, String node) {}

    /**
     * The agent's Pod on {@code node} (which must exist), created as the DaemonSet controller creates it from the
     * chart's DaemonSet the first time (one already there is kept); the local kubelet admits it. From then on the
     * agent's tokens for the node are bound to it, as a projected token is, with the Pod's and the node's names and
     * uids in the user's extras.
     */
    public AgentPod agentPod(String node) {
        if (server.client().nodes().withName(node).get() == null) {
            throw new IllegalArgumentException("there is no Node \"" + node + "\" to run the agent's Pod on");
        }
        return pods.computeIfAbsent(
                node,
                n -> AgentPods.ensure(server.client(), AgentPods.daemonSet(rendered, serviceAccount), NAMESPACE, n));
    }

    /** The audience of the token an agent shows other nodes' agents (the agent's {@code --peer-token-file}). */
    public static final String PEER_AUDIENCE = "drover.dev/agent";

    /** A token and when it expires. */
    public record Minted(String token, Instant expiry) {}

    /**
     * Mints a token of ServiceAccount {@code account} (in {@value #NAMESPACE}) for node {@code node}, as the kubelet
     * mints a pod's projected token: bound to the agent's Pod there when {@code account} is the agent's and {@link
     * #agentPod} made one, else bound to the Node (which must exist; null: bound to nothing, as for a pod of a
     * Deployment here); for {@code audience} (null: the API server's own).
     */
    public Minted mint(String account, String node, String audience) {
        if (node == null) {
            return request(account, audience, null);
        }
        AgentPod pod = account.equals(serviceAccount) ? pods.get(node) : null;
        if (pod != null) {
            return request(
                    account,
                    audience,
                    new BoundObjectReferenceBuilder()
                            .withApiVersion("v1")
                            .withKind("Pod")
                            .withName(pod.name())
                            .withUid(pod.uid())
                            .build());
        }
        Node object = server.client().nodes().withName(node).get();
        if (object == null) {
            throw new IllegalArgumentException("there is no Node \"" + node + "\" to bind the agent's token to");
        }
        return request(
                account,
                audience,
                new BoundObjectReferenceBuilder()
                        .withApiVersion("v1")
                        .withKind("Node")
                        .withName(node)
                        .withUid(object.getMetadata().getUid())
                        .build());
    }

    /** A TokenRequest for {@code account}, bound to {@code bound} (null: to nothing). */
    private Minted request(String account, String audience, BoundObjectReference bound) {
        TokenRequest minted = server.client()
                .serviceAccounts()
                .inNamespace(NAMESPACE)
                .withName(account)
                .tokenRequest(new TokenRequestBuilder()
                        .withNewSpec()
                        .withAudiences(audience == null ? List.of() : List.of(audience))
                        .withExpirationSeconds(TOKEN_LIFETIME.toSeconds())
                        .withBoundObjectRef(bound)
                        .endSpec()
                        .build());
        return new Minted(
                minted.getStatus().getToken(), Instant.parse(minted.getStatus().getExpirationTimestamp()));
    }

    /**
     * Mints a token bound to the agent's Pod on {@code node} ({@link #agentPod}: made first when there is none) and
     * writes a kubeconfig holding it to {@code file}
     * (mode 0600, replaced atomically, so an agent reading it again finds a whole one).
     *
     * @return when the token expires
     */
    public Instant writeKubeconfig(String node, Path file) throws IOException {
        agentPod(node);
        Minted minted = mint(serviceAccount, node, null);
        Kubeconfig.write(file, server.url(), server.certificatePem(), username(), minted.token());
        return minted.expiry();
    }

    /**
     * Mints the agent's peer token for {@code node} (audience {@value #PEER_AUDIENCE}, bound to the agent's Pod there)
     * and writes
     * it to {@code file} as the kubelet writes a projected token: mode 0600, replaced atomically.
     *
     * @return when the token expires
     */
    public Instant writePeerToken(String node, Path file) throws IOException {
        agentPod(node);
        return writeToken(mint(serviceAccount, node, PEER_AUDIENCE), file);
    }

    /** Writes a minted token to {@code file}, mode 0600, replaced atomically; when it expires. */
    static Instant writeToken(Minted minted, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        Path tmp = Files.createTempFile(
                parent,
                ".peer-token",
                ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(tmp, minted.token());
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return minted.expiry();
    }

    /**
     * Keeps {@code file} holding a live token for {@code node}, as the kubelet keeps a projected token: a new one
     * is written when 80 % of the current one's life has passed. The agent's client reads the file again when the
     * server refuses the old token.
     */
    public Renewal renew(String node, Path file) throws IOException {
        return renew(node, file, null);
    }

    /**
     * As {@link #renew(String, Path)}, and keeps {@code peerTokenFile} (when not null) holding a live peer token for
     * the node too, as the chart's projected volume does.
     */
    public Renewal renew(String node, Path kubeconfig, Path peerTokenFile) throws IOException {
        Instant expiry = writeKubeconfig(node, kubeconfig);
        if (peerTokenFile != null) {
            writePeerToken(node, peerTokenFile);
        }
        return new Renewal(
                node,
                () -> {
                    Instant next = writeKubeconfig(node, kubeconfig);
                    if (peerTokenFile != null) {
                        writePeerToken(node, peerTokenFile);
                    }
                    return next;
                },
                expiry);
    }

    /** Keeps tokens fresh with {@code writing}, first due to expire at {@code expiry}; {@code name} names the thread. */
    Renewal renewing(String name, Writing writing, Instant expiry) {
        return new Renewal(name, writing, expiry);
    }

    /** Writes the next tokens; when they expire. */
    interface Writing {
        Instant write() throws IOException;
    }

    /** The thread that writes the next token; {@link #close} stops it. */
    public final class Renewal implements AutoCloseable {
        private final Thread thread;

        private Renewal(String node, Writing writing, Instant firstExpiry) {
            thread = Thread.ofVirtual().name("agent-token-renewal-" + node).start(() -> {
                Instant expiry = firstExpiry;
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        Duration life = Duration.between(Instant.now(), expiry);
                        Thread.sleep(Math.max(1000, life.toMillis() * 8 / 10));
                        expiry = writing.write();
                    } catch (InterruptedException e) {
                        return;
                    } catch (IOException | RuntimeException e) {
                        if (Thread.currentThread().isInterrupted()) {
                            return;
                        }
                        LOG.warn("cannot renew the agent's token for node {}: {}", node, e.toString());
                        expiry = Instant.now().plusSeconds(10); // try again soon
                    }
                }
            });
        }

        @Override
        public void close() {
            thread.interrupt();
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
