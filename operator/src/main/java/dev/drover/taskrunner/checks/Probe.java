package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.Check;
import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * One probe of one check: a request, a connection or a command, bounded by the check's {@code timeout}. A probe
 * never throws for what it finds (a refused connection, a failing command, a bad answer): each is a critical result
 * whose output says what happened.
 */
@FunctionalInterface
interface Probe {

    /** Where http and tcp checks connect: the node's IPv4 loopback address, as a Nomad or Kubernetes check does. */
    InetAddress LOOPBACK = InetAddress.getLoopbackAddress() instanceof Inet4Address v4 ? v4 : ipv4Loopback();

    /**
     * Probes {@code check} of the task {@code target} reaches, now, within the check's timeout. Blocks the calling
     * (virtual) thread; gives way to an interrupt by throwing {@link InterruptedException} or returning soon.
     */
    ProbeResult run(Check check, CheckProber.Target target) throws InterruptedException;

    private static InetAddress ipv4Loopback() {
        try {
            return InetAddress.getByAddress("localhost", new byte[] {127, 0, 0, 1});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException("four bytes are an address", e);
        }
    }

    /** The probes Drover knows, by the check's type: {@link HttpProbe}, {@link TcpProbe} and {@link ExecProbe}. */
    static Probe standard() {
        Probe http = new HttpProbe();
        Probe tcp = new TcpProbe();
        Probe exec = new ExecProbe();
        return (check, target) -> switch (check.getType()) {
            case HTTP -> http.run(check, target);
            case TCP -> tcp.run(check, target);
            case EXEC -> exec.run(check, target);
            case null -> ProbeResult.critical("the check has no type");
        };
    }
}
