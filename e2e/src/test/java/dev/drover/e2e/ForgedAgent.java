package dev.drover.e2e;

import dev.drover.httpapi.AgentCertificate;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * An impostor of a node's agent: a TLS server on the port the node publishes, with a self-signed certificate of its
 * own for the same node name. It answers every request it gets with a tar stream of junk, and counts the TLS
 * handshakes it was offered and the HTTP requests (with their tokens) that reached it.
 */
final class ForgedAgent implements AutoCloseable {

    private final SSLServerSocket socket;
    private final Thread acceptor;
    private final AtomicInteger handshakes = new AtomicInteger();
    private final AtomicInteger requests = new AtomicInteger();

    private ForgedAgent(SSLServerSocket socket) {
        this.socket = socket;
        this.acceptor = Thread.ofVirtual().name("forged-agent").start(this::serve);
    }

    /** Listens on 127.0.0.1:{@code port} with a new certificate made in {@code tlsDir}. */
    static ForgedAgent listen(int port, Path tlsDir) throws IOException, GeneralSecurityException {
        AgentCertificate.Identity identity = AgentCertificate.loadOrCreate(
                tlsDir, "a", List.of(InetAddress.getLoopbackAddress()), Clock.systemUTC());
        SSLServerSocket socket =
                (SSLServerSocket) identity.sslContext().getServerSocketFactory().createServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return new ForgedAgent(socket);
    }

    int handshakes() {
        return handshakes.get();
    }

    int requests() {
        return requests.get();
    }

    private void serve() {
        while (!socket.isClosed()) {
            try (SSLSocket client = (SSLSocket) socket.accept()) {
                handshakes.incrementAndGet();
                client.setSoTimeout(5_000);
                client.startHandshake(); // the real agent's client refuses this certificate here
                InputStream in = client.getInputStream();
                byte[] head = in.readNBytes(4);
                if (head.length > 0) {
                    requests.incrementAndGet();
                    OutputStream out = client.getOutputStream();
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/x-tar\r\nContent-Length: 4\r\n\r\njunk")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
            } catch (IOException e) {
                // a refused handshake, or closing
            }
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        socket.close();
        acceptor.join();
    }
}
