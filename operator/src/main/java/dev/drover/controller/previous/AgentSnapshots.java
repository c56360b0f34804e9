package dev.drover.controller.previous;

import dev.drover.agentapi.AgentProtocol;
import dev.drover.allocwatcher.Claimant;
import dev.drover.allocwatcher.DiskClaimedException;
import dev.drover.allocwatcher.DiskFetcher;
import dev.drover.allocwatcher.Snapshots;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.common.UserText;
import dev.drover.concurrent.Worker;
import dev.drover.httpapi.AgentClient;
import dev.drover.state.AllocId;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import javax.net.ssl.X509KeyManager;

/**
 * Fetches a previous allocation's disk from the agent on the node it ran on: finds the node from the allocation's
 * {@code spec.nodeName} and the agent from the Node ({@link AgentClient}), asks for its {@code snapshot} with this
 * agent's {@link PeerToken} (audience {@code drover.dev/agent}: a token that agent could not replay against the
 * API server) over a connection presenting this agent's own certificate (the one its Node publishes: so that agent,
 * or one it passed the token to, cannot replay the token to a third node's agent), and the successor's name and uid,
 * so that agent claims the disk for it (it checks the successor is bound to the node the token names and the
 * certificate is that node's agent's), and unpacks the stream as hostile
 * ({@link Snapshots#unpack}). A download that makes no progress for {@code idleTimeout} is abandoned.
 */
public final class AgentSnapshots implements DiskFetcher {

    private final KubernetesClient client;
    private final String ownNode;
    private final PeerToken token;
    private final Duration idleTimeout;
    private final Supplier<X509KeyManager> clientKeys;

    /**
     * @param token      this agent's peer token, read at each fetch (a projected ServiceAccount token is rotated)
     * @param clientKeys this agent's own certificate, the one its Node publishes, asked at each fetch (it is
     *                   renewed); null when it has none (its HTTPS API is off), and then the other agent refuses
     */
    public AgentSnapshots(
            KubernetesClient client,
            String ownNode,
            PeerToken token,
            Duration idleTimeout,
            Supplier<X509KeyManager> clientKeys) {
        this.client = client;
        this.ownNode = ownNode;
        this.token = token;
        this.idleTimeout = idleTimeout;
        this.clientKeys = clientKeys;
    }

    @Override
    public Fetched fetch(AllocId previous, Claimant claimant, Path staging, Set<String> tasks, long maxBytes)
            throws IOException, InterruptedException {
        Allocation a;
        try {
            a = client.resources(Allocation.class)
                    .inNamespace(previous.namespace())
                    .withName(previous.name())
                    .get();
        } catch (KubernetesClientException e) {
            throw new IOException("cannot read previous allocation " + previous + ": " + e.getMessage(), e);
        }
        String node = a == null || a.getSpec() == null ? null : a.getSpec().getNodeName();
        if (node == null) {
            throw new IOException("previous allocation " + previous + " is gone, and its disk with it");
        }
        if (node.equals(ownNode)) {
            throw new IOException("it ran on this node, and its directory here is gone (garbage collected?)");
        }
        String credential = token.read();
        try {
            AgentClient.Endpoint agent = AgentClient.find(client, node);
            long bytes = AgentClient.get(
                    agent,
                    AgentProtocol.agentPath(previous.namespace(), previous.name(), "snapshot")
                            + "?successor=" + AgentProtocol.encode(claimant.name())
                            + "&uid=" + AgentProtocol.encode(claimant.uid()),
                    credential,
                    clientKeys.get(),
                    Map.of(),
                    idleTimeout,
                    body -> {
                        try (Watchdog watched = new Watchdog(body, idleTimeout)) {
                            return Snapshots.unpack(watched, staging, tasks, maxBytes);
                        }
                    });
            return new Fetched(node, bytes);
        } catch (AgentClient.AgentException e) {
            if (e.status() == 409) {
                String said = e.getMessage();
                String status = " (HTTP 409)";
                if (said.endsWith(status)) {
                    said = said.substring(0, said.length() - status.length());
                }
                throw DiskClaimedException.onNode(node, UserText.quote(said));
            }
            // the other agent's words are cut and escaped: it may be an impostor, and this reaches users
            throw new IOException(
                    e.status() == 0
                            ? UserText.cut(e.getMessage(), 300)
                            : "the agent of node " + node + " refused: " + UserText.quote(e.getMessage()),
                    e);
        }
    }

    /** Closes the stream under a read that has waited longer than the idle timeout, which ends that read. */
    private static final class Watchdog extends FilterInputStream {
        private final Worker watcher;
        private volatile long lastProgress = System.nanoTime();
        private volatile boolean timedOut;

        Watchdog(InputStream in, Duration idle) {
            super(in);
            long idleNanos = idle.toNanos();
            watcher = Worker.startVirtual("snapshot-watchdog", self -> {
                Thread.sleep(Math.max(1, idle.toMillis() / 4));
                if (System.nanoTime() - lastProgress > idleNanos) {
                    timedOut = true;
                    self.close();
                    try {
                        in.close();
                    } catch (IOException gone) {
                        // the stream is gone already
                    }
                }
            });
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n;
            try {
                n = super.read(b, off, len);
            } catch (IOException e) {
                throw timedOut ? stalled() : e;
            }
            if (timedOut) {
                throw stalled();
            }
            lastProgress = System.nanoTime();
            return n;
        }

        private static IOException stalled() {
            return new IOException("the download stalled: no data for the idle timeout");
        }

        @Override
        public void close() throws IOException {
            watcher.close();
            super.close();
        }
    }
}
