package dev.drover.local;

import dev.drover.gateway.Gateway;
import io.fabric8.kubernetes.api.model.APIService;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The chart's gateway run in this process, as its Deployment runs it on a real cluster: with the chart's serving
 * and client certificates (its Secret), as the gateway's ServiceAccount (a kubeconfig with that account's token), showing agents
 * its own token of audience {@value AgentIdentity#PEER_AUDIENCE}, both renewed as the kubelet renews projected
 * tokens. The chart's Service is pointed at it ({@code clusterIP 127.0.0.1}, {@code targetPort} its port) and the
 * chart's APIService is applied, so the local aggregator reaches it as kube-aggregator would. The CA of its client
 * certificate (the chart's ConfigMap) goes to {@code DIR/}{@value #CA_FILE}, where the agents of the local cluster
 * read it as the DaemonSet's agents read the mounted ConfigMap ({@code --gateway-ca-file}).
 */
public final class LocalGateway implements AutoCloseable {

    /** The file in the gateway's directory that holds the CA of its client certificate, for agents. */
    public static final String CA_FILE = "ca.crt";

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");
    private static final KubernetesSerialization YAML = new KubernetesSerialization();

    private final Gateway gateway;
    private final KubernetesClient client;
    private final AgentIdentity.Renewal renewal;
    private final Path peerToken;

    private LocalGateway(Gateway gateway, KubernetesClient client, AgentIdentity.Renewal renewal, Path peerToken) {
        this.gateway = gateway;
        this.client = client;
        this.renewal = renewal;
        this.peerToken = peerToken;
    }

    static boolean isGateway(HasMetadata o) {
        return o.getMetadata().getLabels() != null
                && "gateway".equals(o.getMetadata().getLabels().get("app.kubernetes.io/component"));
    }

    static LocalGateway start(AgentIdentity identity, LocalApiServer server, String rendered, Path dir)
            throws IOException {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : DOCUMENT_SEPARATOR.split(rendered)) {
            if (!document.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                HasMetadata o = YAML.unmarshal(document, HasMetadata.class);
                if (isGateway(o)) {
                    objects.add(o);
                }
            }
        }
        Secret tls = one(objects, Secret.class);
        ConfigMap ca = one(objects, ConfigMap.class);
        Service service = one(objects, Service.class);
        APIService api = one(objects, APIService.class);
        String account = one(objects, ServiceAccount.class).getMetadata().getName();

        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        writeSecret(cert, Base64.getDecoder().decode(tls.getData().get("tls.crt")));
        writeSecret(key, Base64.getDecoder().decode(tls.getData().get("tls.key")));
        Path clientCert = dir.resolve("client.crt");
        Path clientKey = dir.resolve("client.key");
        writeSecret(clientCert, Base64.getDecoder().decode(tls.getData().get("client.crt")));
        writeSecret(clientKey, Base64.getDecoder().decode(tls.getData().get("client.key")));
        // replaced whole, as the kubelet swaps a ConfigMap volume's files: an agent never reads half of it
        Path caTemp =
                Files.writeString(dir.resolve(CA_FILE + ".new"), ca.getData().get("ca.crt"));
        Files.move(caTemp, dir.resolve(CA_FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Path kubeconfig = dir.resolve("gateway.kubeconfig");
        Path peerToken = dir.resolve("peer-token");
        String user = "system:serviceaccount:" + AgentIdentity.NAMESPACE + ":" + account;
        AgentIdentity.Writing tokens = () -> {
            AgentIdentity.Minted own = identity.mint(account, null, null);
            Kubeconfig.write(kubeconfig, server.url(), server.certificatePem(), user, own.token());
            AgentIdentity.writeToken(identity.mint(account, null, AgentIdentity.PEER_AUDIENCE), peerToken);
            return own.expiry();
        };
        Instant expiry = tokens.write();
        AgentIdentity.Renewal renewal = identity.renewing("gateway", tokens, expiry);
        KubernetesClient client = null;
        Gateway gateway = null;
        try {
            client = new KubernetesClientBuilder()
                    .withConfig(Config.fromKubeconfig(null, kubeconfig.toFile()))
                    .withHttpClientFactory(new JdkHttpClientFactory())
                    .build();
            gateway = Gateway.start(
                    client,
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    new Gateway.Credentials(cert, key, clientCert, clientKey, peerToken));
            service.getSpec().setClusterIP("127.0.0.1");
            service.getSpec().getPorts().getFirst().setTargetPort(new IntOrString(gateway.port()));
            KubernetesClient admin = server.client();
            admin.resource(service).createOr(NonDeletingOperation::update);
            admin.resource(api).createOr(NonDeletingOperation::update);
            return new LocalGateway(gateway, client, renewal, peerToken);
        } catch (GeneralSecurityException | IOException | RuntimeException e) {
            if (gateway != null) {
                gateway.close();
            }
            if (client != null) {
                client.close();
            }
            renewal.close();
            throw new IOException("the gateway cannot start: " + e.getMessage(), e);
        }
    }

    private static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type) {
        return objects.stream()
                .filter(type::isInstance)
                .map(type::cast)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException(
                        "the chart renders no gateway " + type.getSimpleName() + " (gateway.enabled false?)"));
    }

    private static void writeSecret(Path file, byte[] bytes) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.write(file, bytes);
    }

    /** The user the gateway's token names, as the chart renders it: the agents' {@code --gateway-user}. */
    static String user(String rendered) {
        for (String document : DOCUMENT_SEPARATOR.split(rendered)) {
            if (!document.lines().allMatch(l -> l.isBlank() || l.stripLeading().startsWith("#"))) {
                HasMetadata o = YAML.unmarshal(document, HasMetadata.class);
                if (o instanceof ServiceAccount sa && isGateway(sa)) {
                    return "system:serviceaccount:" + AgentIdentity.NAMESPACE + ":"
                            + sa.getMetadata().getName();
                }
            }
        }
        throw new IllegalStateException("the chart renders no gateway ServiceAccount (gateway.enabled false?)");
    }

    /** Where the gateway serves, on 127.0.0.1. */
    public int port() {
        return gateway.port();
    }

    /** The file of the gateway's own token for agents (what a node's agent sees of it). */
    public Path peerTokenFile() {
        return peerToken;
    }

    @Override
    public void close() {
        gateway.close();
        client.close();
        renewal.close();
    }
}
