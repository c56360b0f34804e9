package dev.drover.taskrunner.checks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckType;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class TcpProbeTest {

    final TcpProbe probe = new TcpProbe();

    static Check check(Integer port) {
        Check c = new Check("port", CheckType.TCP);
        c.setPort(new IntOrString(port));
        return c;
    }

    ProbeResult run(Check check) throws InterruptedException {
        return probe.run(check, request -> {
            throw new AssertionError("a tcp check runs no command");
        });
    }

    @Test
    void listeningPortPasses() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, TcpProbe.LOOPBACK)) {
            assertThat(run(check(server.getLocalPort()))).isEqualTo(ProbeResult.passing("connected"));
        }
    }

    @Test
    void closedPortIsRefused() throws Exception {
        int port;
        try (ServerSocket server = new ServerSocket(0, 1, TcpProbe.LOOPBACK)) {
            port = server.getLocalPort();
        }
        assertThat(run(check(port))).isEqualTo(ProbeResult.critical("connection refused"));
    }

    @Test
    void checkWithoutPortIsCriticalNotAnError() throws Exception {
        assertThat(run(check(null))).isEqualTo(ProbeResult.critical("the check has no port"));
    }
}
