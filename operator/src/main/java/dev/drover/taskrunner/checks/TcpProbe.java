package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Optional;

/** A tcp check: passes when a connection to the check's port on the node's loopback address opens in time. */
final class TcpProbe implements Probe {

    /** Where http and tcp checks connect: the node's IPv4 loopback address, as a Nomad or Kubernetes check does. */
    static final InetAddress LOOPBACK =
            InetAddress.getLoopbackAddress() instanceof Inet4Address v4 ? v4 : ipv4Loopback();

    private static InetAddress ipv4Loopback() {
        try {
            return InetAddress.getByAddress("localhost", new byte[] {127, 0, 0, 1});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("four bytes are an address", e);
        }
    }

    @Override
    public ProbeResult run(Check check, CheckProber.Target target) throws InterruptedException {
        Optional<InetSocketAddress> to = target.address(check.getPort());
        if (to.isEmpty()) {
            return ProbeResult.critical(noPort(check));
        }
        Duration timeout = check.effectiveTimeout();
        InetSocketAddress address = to.get();
        try (Socket socket = new Socket()) {
            socket.connect(address, timeoutMillis(timeout));
            return ProbeResult.passing("connected");
        } catch (IOException e) {
            if (Thread.interrupted()) {
                throw new InterruptedException("abandoned while connecting");
            }
            return ProbeResult.critical(failure(e, timeout));
        }
    }

    /** Why a check has nowhere to connect. */
    static String noPort(Check check) {
        return check.getPort() == null || check.getPort().getStrVal() == null
                ? "the check has no port"
                : "the allocation has no port "
                        + ProbeOutput.clean(String.valueOf(check.getPort().getStrVal())) + " (spec.network.ports)";
    }

    /** {@code timeout} as a socket's timeout in milliseconds: at least 1, as 0 would mean none. */
    static int timeoutMillis(Duration timeout) {
        return (int) Math.clamp(timeout.toMillis(), 1, Integer.MAX_VALUE);
    }

    /** What a failed connection says: the usual failures in words, others with the system's message. */
    static String failure(IOException e, Duration timeout) {
        if (e instanceof SocketTimeoutException) {
            return ProbeOutput.timedOut(timeout);
        }
        if (e instanceof ConnectException
                && String.valueOf(e.getMessage()).toLowerCase().contains("refused")) {
            return "connection refused";
        }
        return ProbeOutput.clean(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
    }
}
