package dev.drover.web;

import java.time.Duration;

/**
 * What a server's connections may hold before they are served ({@link PendingConnections}).
 *
 * @param maxConnections connections held at once, whatever their state: at the bound no more are accepted until one
 *                       closes (those waiting stay in the backlog)
 * @param maxUntrusted   connections waiting for a request's head that have not yet shown a client's credentials; at
 *                       the bound the oldest is closed for a new one, so a flood without credentials churns only its
 *                       own connections. Below {@code maxConnections}, which leaves room for known clients
 * @param headDeadline   how long after the accept a connection may take to send its first request's head, TLS
 *                       handshake included, however it trickles its bytes
 * @param keepAlive      how long after a request ends a kept-alive connection may take to send the next one's head
 */
public record ConnectionBounds(int maxConnections, int maxUntrusted, Duration headDeadline, Duration keepAlive) {

    /**
     * Time enough for a handshake and a head over a slow link; a TLS connection waiting in its handshake costs the
     * server some 30 KB (17 500 of them took 520 MB), so a thousand cost some 30 MB.
     */
    public static final ConnectionBounds DEFAULT =
            new ConnectionBounds(2048, 1024, Duration.ofSeconds(10), Duration.ofSeconds(30));

    public ConnectionBounds {
        if (maxUntrusted < 1 || maxUntrusted >= maxConnections) {
            throw new IllegalArgumentException("maxUntrusted: " + maxUntrusted
                    + " must be at least 1 and below maxConnections (" + maxConnections + ")");
        }
        if (headDeadline.isNegative() || headDeadline.isZero()) {
            throw new IllegalArgumentException("headDeadline: " + headDeadline + " must be positive");
        }
        if (keepAlive.isNegative() || keepAlive.isZero()) {
            throw new IllegalArgumentException("keepAlive: " + keepAlive + " must be positive");
        }
    }
}
