package dev.drover.e2e;

import dev.drover.local.LocalApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A local API server with the given nodes and its administrator's kubectl, for one test class:
 * {@code @RegisterExtension static final LocalCluster cluster = new LocalCluster("local")}.
 */
final class LocalCluster implements BeforeAllCallback, AfterAllCallback {

    private final List<String> nodes;
    private Path dir;
    private LocalApiServer server;
    private Kubectl kubectl;

    LocalCluster(String... nodes) {
        this.nodes = List.of(nodes);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        dir = Files.createTempDirectory("drover-local-cluster");
        server = LocalApiServer.start(
                LocalApiServer.Options.defaults().withNodes(nodes).withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (server != null) {
            server.close();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    LocalApiServer server() {
        return server;
    }

    Kubectl kubectl() {
        return kubectl;
    }
}
