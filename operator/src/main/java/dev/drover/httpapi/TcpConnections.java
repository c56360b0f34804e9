package dev.drover.httpapi;

import java.io.BufferedReader;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * Whether the peer of a TCP connection the agent serves has gone, as the
 * kernel sees it ({@code /proc/net/tcp} and {@code tcp6}). The JDK's HTTP
 * server gives a handler neither its socket nor a way to learn that the client
 * hung up, and a followed log of a quiet task writes nothing that would fail:
 * so a follower asks the kernel (the agent's and the gateway's). A connection the peer closed is in
 * {@code CLOSE_WAIT} (or later); one it reset is no longer listed. Where the
 * tables cannot be read (not Linux) every connection counts as open. The
 * tables are read at most once per {@link #FRESH} for all the followers
 * together, so many idle follows cost one scan a second.
 */
public final class TcpConnections {

    /**
     * How old a reading may be. Shorter than {@link AgentApi#PEER_CHECK}: a follower first asks that long after
     * its connection was accepted, so the reading it gets is always younger than its connection.
     */
    static final Duration FRESH = Duration.ofSeconds(1);

    /** The states after the peer's FIN: CLOSE_WAIT, LAST_ACK, CLOSING, TIME_WAIT, CLOSE. */
    private static final List<String> PEER_CLOSED = List.of("08", "09", "0B", "06", "07");

    private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

    private final int port;
    private Map<String, String> states;
    private long readAt;

    /** The connections to the server on {@code port}. */
    public TcpConnections(int port) {
        this.port = port;
    }

    /**
     * True when the connection from {@code remote} to {@code local} is closed by its peer or gone; false while it
     * is open, and when the kernel's tables cannot be read.
     */
    public synchronized boolean peerGone(InetSocketAddress local, InetSocketAddress remote) {
        if (states == null || System.nanoTime() - readAt > FRESH.toNanos()) {
            states = read(port);
            readAt = System.nanoTime();
        }
        if (states.isEmpty()) {
            return false; // unreadable, or not even the listening socket is listed: not the server's tables
        }
        String state = states.get(key(local) + ">" + key(remote));
        return state == null || PEER_CLOSED.contains(state);
    }

    /** The state of each connection to or from {@code port}, by local and remote address; empty if unreadable. */
    private static Map<String, String> read(int port) {
        Map<String, String> states = new HashMap<>();
        String localPort = String.format("%04X", port);
        for (Path table : TABLES) {
            try (BufferedReader in = Files.newBufferedReader(table, StandardCharsets.US_ASCII)) {
                in.readLine(); // the header
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    // "  sl  local_address rem_address   st ..."
                    String[] f = line.trim().split("\\s+", 5);
                    if (f.length >= 4 && f[1].endsWith(":" + localPort)) {
                        states.put(key(f[1]) + ">" + key(f[2]), f[3]);
                    }
                }
            } catch (IOException | RuntimeException unreadable) {
                // not Linux, or no such table (no IPv6): the other one may still be there
            }
        }
        return states;
    }

    private static String key(InetSocketAddress a) {
        return HexFormat.of().formatHex(a.getAddress().getAddress()) + "/" + a.getPort(); // no IPv6 scope
    }

    /**
     * {@code 0100007F:1F90}: the address as the kernel's 32-bit words in host byte order, then the port; an
     * IPv4-mapped IPv6 address comes out as the IPv4 one, as Java reports it.
     */
    private static String key(String hexAddressAndPort) {
        int colon = hexAddressAndPort.indexOf(':');
        String hex = hexAddressAndPort.substring(0, colon);
        ByteBuffer bytes = ByteBuffer.allocate(hex.length() / 2).order(ByteOrder.nativeOrder());
        for (int i = 0; i < hex.length(); i += 8) {
            bytes.putInt(Integer.parseUnsignedInt(hex, i, i + 8, 16));
        }
        try {
            return HexFormat.of()
                            .formatHex(InetAddress.getByAddress(bytes.array()).getAddress()) + "/"
                    + Integer.parseInt(hexAddressAndPort, colon + 1, hexAddressAndPort.length(), 16);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + hexAddressAndPort, e);
        }
    }
}
