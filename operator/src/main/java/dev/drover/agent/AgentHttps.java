package dev.drover.agent;

import dev.drover.httpapi.AgentApi;
import dev.drover.httpapi.AgentCertificate;
import dev.drover.httpapi.CertificateKeeper;
import dev.drover.httpapi.GatewayTrust;
import dev.drover.httpapi.KubernetesAuth;
import dev.drover.httpapi.LocalAllocations;
import dev.drover.httpapi.Successors;
import dev.drover.kube.NodeView;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's HTTPS API as it starts: its certificate, naming the node and the addresses on its Node object (clients
 * dial those, and check the name as well as the published fingerprint), and who the gateway is.
 */
final class AgentHttps {

    private static final Logger LOG = LoggerFactory.getLogger(AgentHttps.class);
    /** How often the API's certificate is checked for renewal (it is renewed 30 days before it expires). */
    private static final Duration CERTIFICATE_CHECK_INTERVAL = Duration.ofHours(6);

    /** The API serving, and the keeper of its certificate; the agent closes both. */
    record Started(AgentApi api, CertificateKeeper certificates) {}

    private AgentHttps() {}

    /** @param renewed told each renewed certificate, to publish its fingerprint */
    static Started start(
            AgentConfig config,
            KubernetesClient client,
            Clock clock,
            LocalAllocations allocations,
            Consumer<AgentCertificate.Identity> renewed)
            throws IOException {
        List<InetAddress> addresses = new ArrayList<>(List.of(InetAddress.getLoopbackAddress()));
        try {
            NodeView node = NodeView.read(client, config.nodeName());
            for (String a : node == null ? List.<String>of() : node.dialled()) {
                if (a.matches("[0-9a-fA-F:.]+")) { // an IP literal: no name lookup here
                    addresses.add(InetAddress.getByName(a));
                }
            }
        } catch (KubernetesClientException e) {
            LOG.warn("cannot read node {}'s addresses for the API certificate: {}", config.nodeName(), e.getMessage());
        }
        CertificateKeeper certificates = CertificateKeeper.start(
                config.dataDir().resolve("tls"),
                config.nodeName(),
                addresses,
                clock,
                CERTIFICATE_CHECK_INTERVAL,
                renewed);
        AgentApi started;
        try {
            started = AgentApi.start(
                    new InetSocketAddress(config.bindAddress().orElse(null), config.apiPort()),
                    certificates.sslContext(),
                    new KubernetesAuth(client, clock, config.apiLimits()),
                    gateway(config, clock),
                    allocations,
                    new Successors(client),
                    config.nodeName(),
                    config.apiLimits());
        } catch (java.security.GeneralSecurityException e) {
            certificates.close();
            throw new IOException("cannot serve TLS with the agent's certificate: " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            certificates.close();
            throw e;
        }
        LOG.info(
                "serving the HTTPS API on port {} (certificate sha256 {})",
                started.port(),
                certificates.identity().fingerprint());
        return new Started(started, certificates);
    }

    /** Who the gateway is; said at start, since without it users reach no task through the API server. */
    private static GatewayTrust gateway(AgentConfig config, Clock clock) {
        GatewayTrust trust = new GatewayTrust(config.gatewayUser(), config.gatewayCaFile(), clock);
        if (trust.user().isEmpty()) {
            LOG.info("no gatewayUser: no caller is taken as the Drover gateway (the chart sets it when it installs"
                    + " the gateway)");
        } else if (!java.nio.file.Files.isRegularFile(trust.caFile())) {
            LOG.warn(
                    "no gateway CA at {}: the gateway ({}) is refused until the file appears",
                    trust.caFile(),
                    trust.user().get());
        } else {
            LOG.info(
                    "the Drover gateway is {} with a client certificate from the CA in {}",
                    trust.user().get(),
                    trust.caFile());
        }
        return trust;
    }
}
