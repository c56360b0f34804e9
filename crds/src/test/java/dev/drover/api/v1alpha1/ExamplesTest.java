package dev.drover.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.validation.AllocationValidator;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ExamplesTest {

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");

    static Stream<Path> examples() throws IOException {
        try (Stream<Path> files = Stream.concat(
                Files.list(Path.of("..", "examples")), Files.list(Path.of("..", "examples", "secrets")))) {
            List<Path> allocations = files.filter(p -> p.toString().endsWith(".yaml"))
                    .filter(ExamplesTest::isAllocation)
                    .sorted()
                    .toList();
            assertThat(allocations).hasSizeGreaterThanOrEqualTo(6);
            return allocations.stream();
        }
    }

    private static boolean isAllocation(Path p) {
        try {
            return Files.readString(p).contains("kind: Allocation");
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    @ParameterizedTest
    @MethodSource("examples")
    void everyExampleParsesAndIsValid(Path file) throws IOException {
        List<Allocation> allocations = allocations(file);
        assertThat(allocations).as(file.toString()).isNotEmpty();
        for (Allocation a : allocations) {
            assertThat(a.getSpec().getNodeName()).isEqualTo("local");
            assertThat(AllocationValidator.validate(a))
                    .as(file + ": " + a.getMetadata().getName())
                    .isEmpty();
        }
    }

    /**
     * Each Service an example's allocation publishes into is in the same file, in its namespace, without a selector,
     * with a port the agent picks for the allocation's port (docs/networking.md, "Making a Service").
     */
    @ParameterizedTest
    @MethodSource("examples")
    void everyPublishedServiceIsSelectorlessWithAPortForTheAllocationsPort(Path file) throws IOException {
        List<Service> services = documents(file).stream()
                .filter(d -> d.contains("kind: Service\n"))
                .map(d -> Serialization.unmarshal(d, Service.class))
                .toList();
        for (Allocation a : allocations(file)) {
            List<ServicePublication> published =
                    Objects.requireNonNullElse(a.getSpec().getServices(), List.of());
            for (ServicePublication p : published) {
                Service s = services.stream()
                        .filter(x -> x.getMetadata().getName().equals(p.getName())
                                && x.getMetadata()
                                        .getNamespace()
                                        .equals(a.getMetadata().getNamespace()))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError(file + ": no Service " + p.getName() + " beside "
                                + a.getMetadata().getName()));
                assertThat(s.getSpec().getSelector())
                        .as("Kubernetes' controller leaves it to Drover")
                        .isNullOrEmpty();
                assertThat(s.getSpec().getPorts())
                        .as("a port of Service %s serves the allocation's port %s", p.getName(), p.getPort())
                        .anyMatch(port -> servesPort(port, p.getPort()));
            }
        }
    }

    @Test
    void theServiceExampleHasTwoReplicasOnBridgeNetworksCheckedOnTheirNamedPort() throws IOException {
        List<Allocation> replicas = allocations(Path.of("..", "examples", "web-service.yaml"));
        assertThat(replicas).hasSize(2).allSatisfy(a -> {
            assertThat(a.getSpec().effectiveNetworkMode()).isEqualTo(NetworkMode.BRIDGE);
            assertThat(a.getSpec().getNetwork().port("http").getStatic())
                    .as("dynamic")
                    .isNull();
            assertThat(a.getSpec().getNetwork().port("http").getTo()).isEqualTo(8080);
            assertThat(a.getSpec()
                            .getTasks()
                            .getFirst()
                            .getChecks()
                            .getFirst()
                            .getPort()
                            .getStrVal())
                    .isEqualTo("http");
        });
    }

    /** The agent's choice: a port whose targetPort names it, else the port of its name (docs/networking.md). */
    private static boolean servesPort(ServicePort port, String allocationPort) {
        return port.getTargetPort() != null
                        && allocationPort.equals(port.getTargetPort().getStrVal())
                || allocationPort.equals(port.getName());
    }

    private static List<Allocation> allocations(Path file) throws IOException {
        return documents(file).stream()
                .filter(d -> d.contains("kind: Allocation"))
                .map(d -> Serialization.unmarshal(d, Allocation.class))
                .toList();
    }

    private static List<String> documents(Path file) throws IOException {
        return Arrays.stream(DOCUMENT_SEPARATOR.split(Files.readString(file)))
                .filter(d -> !d.isBlank())
                .toList();
    }
}
