package dev.drover.web;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A slowloris attack on loopback: plain TCP connections that each begin a TLS handshake and never finish it, as a
 * client that trickles its handshake or its request's head does. Costs the test no TLS work, and the server what a
 * trickling client costs it.
 */
public final class Slowloris implements AutoCloseable {

    /** A TLS record header announcing a 512-byte ClientHello, and the hello's first bytes. */
    private static final byte[] HANDSHAKE_BEGUN = {
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc, 0x03, 0x03
    };

    /** How many connects are under way at once: fewer than a backlog holds, so none is dropped while accepted. */
    private static final int AT_ONCE = 16;

    private final List<Socket> sockets;
    private final boolean refused;

    private Slowloris(List<Socket> sockets, boolean refused) {
        this.sockets = sockets;
        this.refused = refused;
    }

    /**
     * Opens up to {@code count} connections to {@code port}, a few at a time; stops at the first that is not accepted
     * within {@code connectTimeout} (the server takes no more).
     */
    public static Slowloris open(int port, int count, Duration connectTimeout) throws InterruptedException {
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        List<Socket> opened = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean refused = new AtomicBoolean();
        Semaphore slots = new Semaphore(AT_ONCE);
        try (ExecutorService connects = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < count && !refused.get(); i++) {
                slots.acquire();
                connects.execute(() -> {
                    Socket socket = new Socket();
                    try {
                        socket.connect(address, (int) connectTimeout.toMillis());
                        socket.getOutputStream().write(HANDSHAKE_BEGUN);
                        opened.add(socket);
                    } catch (IOException e) {
                        refused.set(true);
                        closeQuietly(socket);
                    } finally {
                        slots.release();
                    }
                });
            }
        }
        return new Slowloris(new ArrayList<>(opened), refused.get());
    }

    /** Connections the server accepted. */
    public int opened() {
        return sockets.size();
    }

    /** Whether a connection was not accepted in time. */
    public boolean refused() {
        return refused;
    }

    /** Which of the connections the server has closed, in the order they were opened. */
    public List<Boolean> closedByServer() throws IOException {
        List<Boolean> closed = new ArrayList<>();
        for (Socket socket : sockets) {
            closed.add(closedByServer(socket));
        }
        return closed;
    }

    /** How many of the connections the server has closed. */
    public long countClosedByServer() throws IOException {
        return closedByServer().stream().filter(c -> c).count();
    }

    private static boolean closedByServer(Socket socket) throws IOException {
        socket.setSoTimeout(1);
        try {
            return socket.getInputStream().read() < 0;
        } catch (SocketTimeoutException open) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }

    @Override
    public void close() {
        sockets.forEach(Slowloris::closeQuietly);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // nothing held
        }
    }
}
