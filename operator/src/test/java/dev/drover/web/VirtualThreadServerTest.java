package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.eclipse.jetty.util.MemoryUtils;
import org.junit.jupiter.api.Test;

class VirtualThreadServerTest {

    @Test
    void aServerStartsWithoutTheMBeanServerAndJettyKnowsTheReferenceSize() throws Exception {
        String out = child(List.of());

        assertThat(out).contains("references per cache line: 16");
        assertThat(out).contains("started");
        assertThat(out).doesNotContain("javax.management.MBeanServerFactory");
    }

    @Test
    void uncompressedReferencesAreHalfAsManyPerLine() throws Exception {
        String out = child(List.of("-XX:-UseCompressedOops"));

        assertThat(out).contains("references per cache line: 8");
        assertThat(out).doesNotContain("javax.management.MBeanServerFactory");
    }

    @Test
    void aValueSetOnTheCommandLineIsKept() throws Exception {
        String out = child(List.of("-D" + VirtualThreadServer.REFERENCES_PER_CACHE_LINE + "=3"));

        assertThat(out).contains("references per cache line: 3");
    }

    /** The output of {@link Serve} in a JVM of its own (the MBean server, once started, stays for the JVM's life). */
    private static String child(List<String> jvmOptions) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of(
                "-Xlog:class+load=info:stdout", "-cp", System.getProperty("java.class.path"), Serve.class.getName()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        // the classes loaded, but for JMX's, would bury any failure's message
        String text = new String(out, StandardCharsets.UTF_8)
                .lines()
                .filter(l -> !l.contains("[class,load]") || l.contains("javax.management."))
                .collect(Collectors.joining("\n"));
        assertThat(p.exitValue()).as(text).isZero();
        return text;
    }

    /** Starts and stops a plain HTTP server, then prints what Jetty took for the size of a reference. */
    static final class Serve {
        public static void main(String[] args) throws IOException {
            PlainHttp http = PlainHttp.start(
                    "test",
                    new InetSocketAddress("127.0.0.1", 0),
                    exchange -> exchange.send(204, "text/plain", new byte[0]));
            http.close();
            System.out.println("started");
            System.out.println("references per cache line: " + MemoryUtils.getReferencesPerCacheLine());
        }
    }
}
