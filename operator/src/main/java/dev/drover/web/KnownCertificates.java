package dev.drover.web;

import java.security.cert.X509Certificate;

/**
 * The client certificates a server knows as soon as a TLS handshake presents them (the gateway's to an agent, the
 * Kubernetes front proxy's to the gateway): a connection presenting one is a known client's from its handshake on,
 * and a flood of connections without credentials cannot push it out before its first request ({@link
 * ConnectionBounds#maxUntrusted}). A check here only spares a connection that eviction; each request is still
 * authenticated in full.
 */
@FunctionalInterface
public interface KnownCertificates {

    /** Knows none: every connection is trusted only once a request has shown its credentials. */
    KnownCertificates NONE = chain -> false;

    /**
     * Whether {@code chain} (the client's certificates, its own first; never empty) is known. Runs as the handshake
     * ends, on the server's thread: it must not block on the network.
     */
    boolean known(X509Certificate[] chain);
}
