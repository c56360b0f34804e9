package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

/** A tcp check: passes when a connection to the check's port on the node's loopback address opens in time. */
final class TcpProbe implements Probe {

    @Override
    public ProbeResult run(Check check, CheckProber.Target target) throws InterruptedException {
        if (check.getPort() == null) {
            return ProbeResult.critical("the check has no port");
        }
        Duration timeout = check.effectiveTimeout();
        InetSocketAddress address = new InetSocketAddress(Probe.LOOPBACK, check.getPort());
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
