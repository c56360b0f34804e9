package dev.drover.httpapi;

import dev.drover.concurrent.Worker;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedKeyManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the agent's TLS identity fresh while it runs: checks it every {@code interval} and, once it is within
 * {@link AgentCertificate#RENEW_BEFORE} of expiry, makes a new one ({@link AgentCertificate#loadOrCreate}), serves
 * it from the next handshake on (the server keeps running; its {@link #sslContext()} asks this keeper for the
 * key), and hands it to {@code renewed} (which publishes the new fingerprint on the Node). A handshake always gets
 * a key and certificate of one identity: each identity has its own alias.
 */
public final class CertificateKeeper implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CertificateKeeper.class);

    private final Path dir;
    private final String node;
    private final List<InetAddress> addresses;
    private final Clock clock;
    private final Consumer<AgentCertificate.Identity> renewed;
    private final Worker worker;
    /** The identity served now, and its alias; replaced together. */
    private volatile Current current;
    /** The one before, for a handshake that chose its alias just before a renewal. */
    private volatile Current previous;

    private record Current(String alias, AgentCertificate.Identity identity) {}

    private CertificateKeeper(
            Path dir,
            String node,
            List<InetAddress> addresses,
            Clock clock,
            Consumer<AgentCertificate.Identity> renewed,
            Duration interval)
            throws IOException {
        this.dir = dir;
        this.node = node;
        this.addresses = List.copyOf(addresses);
        this.clock = clock;
        this.renewed = renewed;
        this.current = new Current("agent-0", AgentCertificate.loadOrCreate(dir, node, addresses, clock));
        this.worker = Worker.startVirtual("drover-certificate-keeper", self -> {
            Thread.sleep(interval);
            renewQuietly();
        });
    }

    /**
     * Loads or makes the identity in {@code dir} now, and checks it every {@code interval} from then on.
     *
     * @param renewed told of each new identity, on the keeper's thread
     */
    public static CertificateKeeper start(
            Path dir,
            String node,
            List<InetAddress> addresses,
            Clock clock,
            Duration interval,
            Consumer<AgentCertificate.Identity> renewed)
            throws IOException {
        return new CertificateKeeper(dir, node, addresses, clock, renewed, interval);
    }

    /** The identity served now. */
    public AgentCertificate.Identity identity() {
        return current.identity();
    }

    /** A server TLS context that always presents the identity this keeper holds at the time of the handshake. */
    public SSLContext sslContext() throws GeneralSecurityException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(new KeyManager[] {new KeeperKeys()}, new TrustManager[] {GatewayTrust.checkedPerRequest()}, null);
        return context;
    }

    /** Replaces the identity if it is due; returns whether it did. */
    public synchronized boolean renewIfDue() throws IOException {
        Current now = current;
        String why = AgentCertificate.unusable(now.identity(), node, addresses, clock.instant());
        if (why == null) {
            return false;
        }
        AgentCertificate.Identity next = AgentCertificate.loadOrCreate(dir, node, addresses, clock);
        int generation = Integer.parseInt(now.alias().substring("agent-".length())) + 1;
        previous = now;
        current = new Current("agent-" + generation, next);
        LOG.info(
                "renewed the agent's TLS certificate ({}): sha256 {}, valid until {}",
                why,
                next.fingerprint(),
                next.notAfter());
        renewed.accept(next);
        return true;
    }

    private void renewQuietly() {
        try {
            renewIfDue();
        } catch (IOException | RuntimeException e) {
            LOG.warn("cannot renew the agent's TLS certificate (will retry): {}", e.toString());
        }
    }

    /** Stops checking; joins the thread. */
    @Override
    public void close() {
        worker.close();
    }

    /** Server keys only: the alias chosen for a handshake names one identity, so its key and chain match. */
    private final class KeeperKeys extends X509ExtendedKeyManager {

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return alias(keyType);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return alias(keyType);
        }

        private String alias(String keyType) {
            Current now = current;
            return now.identity().key().getAlgorithm().equals(keyType) ? now.alias() : null;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            String alias = alias(keyType);
            return alias == null ? null : new String[] {alias};
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            AgentCertificate.Identity id = byAlias(alias);
            return id == null ? null : new X509Certificate[] {id.certificate()};
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            AgentCertificate.Identity id = byAlias(alias);
            return id == null ? null : id.key();
        }

        private AgentCertificate.Identity byAlias(String alias) {
            for (Current c : new Current[] {current, previous}) {
                if (c != null && c.alias().equals(alias)) {
                    return c.identity();
                }
            }
            return null;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return null;
        }
    }
}
