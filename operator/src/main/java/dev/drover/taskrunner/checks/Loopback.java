package dev.drover.taskrunner.checks;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** Where http and tcp checks of a port number connect: the node's IPv4 loopback, as a Nomad or Kubernetes check does. */
final class Loopback {

    static final InetAddress IPV4 = InetAddress.getLoopbackAddress() instanceof Inet4Address v4 ? v4 : ipv4();

    private Loopback() {}

    private static InetAddress ipv4() {
        try {
            return InetAddress.getByAddress("localhost", new byte[] {127, 0, 0, 1});
        } catch (UnknownHostException e) {
            throw new IllegalStateException("four bytes are an address", e);
        }
    }
}
