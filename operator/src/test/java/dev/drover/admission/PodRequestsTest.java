package dev.drover.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class PodRequestsTest {

    static final long MI = 1L << 20;

    /** Requests as {@code cpu/memory}, either side empty for none: {@code "250m/64Mi"}, {@code "1/"}. */
    static Map<String, Quantity> amounts(String cpuSlashMemory) {
        String[] parts = cpuSlashMemory.split("/", -1);
        Map<String, Quantity> out = new LinkedHashMap<>();
        if (!parts[0].isEmpty()) {
            out.put("cpu", new Quantity(parts[0]));
        }
        if (!parts[1].isEmpty()) {
            out.put("memory", new Quantity(parts[1]));
        }
        return out;
    }

    static Container container(String name, String requests) {
        return new ContainerBuilder()
                .withName(name)
                .withNewResources()
                .withRequests(amounts(requests))
                .endResources()
                .build();
    }

    static Container sidecar(String name, String requests) {
        Container c = container(name, requests);
        c.setRestartPolicy("Always");
        return c;
    }

    static PodBuilder pod(String name, String phase, List<Container> init, List<Container> containers) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace("default")
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withNodeName("n1")
                .withInitContainers(init)
                .withContainers(containers)
                .endSpec()
                .withNewStatus()
                .withPhase(phase)
                .endStatus();
    }

    static Pod running(String name, String... containerRequests) {
        List<Container> containers = Stream.of(containerRequests)
                .map(r -> container("c" + r.hashCode(), r))
                .toList();
        return pod(name, "Running", List.of(), containers).build();
    }

    @Test
    void finishedPodsHoldNothing() {
        Pod pending = pod("pending", "Pending", List.of(), List.of(container("a", "500m/100Mi")))
                .build();
        Pod succeeded = pod("done", "Succeeded", List.of(), List.of(container("a", "2/1Gi")))
                .build();
        Pod failed = pod("failed", "Failed", List.of(), List.of(container("a", "3/2Gi")))
                .build();

        PodRequests.Total total = PodRequests.of(List.of(pending, succeeded, failed, running("r", "1/64Mi")));

        assertThat(total.cpuMillis()).isEqualTo(1500);
        assertThat(total.memoryBytes()).isEqualTo(164 * MI);
        assertThat(total.count()).isEqualTo(2);
        assertThat(total.pods())
                .containsExactly(
                        new PodRequests.Held("default/pending", 500, 100 * MI),
                        new PodRequests.Held("default/r", 1000, 64 * MI));
        assertThat(total.cpuMemory()).isEqualTo(new CpuMemory(1500, 164));
    }

    static Stream<Arguments> initContainers() {
        return Stream.of(
                Arguments.of(
                        "containers' sum beats the largest init container",
                        List.of(container("i1", "500m/100Mi"), container("i2", "200m/50Mi")),
                        List.of(container("a", "300m/60Mi"), container("b", "300m/60Mi")),
                        600,
                        120 * MI),
                Arguments.of(
                        "the largest init container beats the sum, not the init containers' sum",
                        List.of(container("i1", "1/100Mi"), container("i2", "800m/300Mi")),
                        List.of(container("a", "300m/60Mi"), container("b", "300m/60Mi")),
                        1000,
                        300 * MI),
                Arguments.of(
                        "each resource takes its own maximum",
                        List.of(container("i1", "2/10Mi")),
                        List.of(container("a", "100m/1Gi")),
                        2000,
                        1024 * MI),
                Arguments.of(
                        "sidecars add to what the containers run with",
                        List.of(sidecar("s1", "200m/20Mi"), sidecar("s2", "100m/10Mi")),
                        List.of(container("a", "1/100Mi")),
                        1300,
                        130 * MI),
                Arguments.of(
                        "an init container after a sidecar needs its own requests plus the sidecar's",
                        List.of(sidecar("s", "500m/50Mi"), container("i", "2/100Mi")),
                        List.of(container("a", "1/100Mi")),
                        2500,
                        150 * MI),
                Arguments.of(
                        "an init container before a sidecar needs only its own requests",
                        List.of(container("i", "2/100Mi"), sidecar("s", "500m/50Mi")),
                        List.of(container("a", "1/100Mi")),
                        2000,
                        150 * MI),
                Arguments.of(
                        "a container without requests holds nothing",
                        List.of(),
                        List.of(new ContainerBuilder().withName("bare").build(), container("a", "/1Mi")),
                        0,
                        MI));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("initContainers")
    void aPodHoldsTheMoreOfWhatItRunsWithAndWhatItStartsWith(
            String behaviour, List<Container> init, List<Container> containers, long cpuMillis, long memoryBytes) {
        PodRequests.Held held =
                PodRequests.of(pod("p", "Running", init, containers).build());

        assertThat(held).isEqualTo(new PodRequests.Held("default/p", cpuMillis, memoryBytes));
    }

    @Test
    void overheadAddsToWhatThePodHolds() {
        Pod pod = pod("kata", "Running", List.of(container("i", "2/10Mi")), List.of(container("a", "1/100Mi")))
                .editSpec()
                .withOverhead(amounts("250m/120Mi"))
                .endSpec()
                .build();

        assertThat(PodRequests.of(pod)).isEqualTo(new PodRequests.Held("default/kata", 2250, 220 * MI));
    }

    @Test
    void podLevelRequestsTakeThePlaceOfTheContainersForTheResourcesTheyName() {
        Pod pod = pod("p", "Running", List.of(), List.of(container("a", "1/100Mi"), container("b", "1/100Mi")))
                .editSpec()
                .withNewResources()
                .withRequests(amounts("3/"))
                .endResources()
                .withOverhead(amounts("100m/10Mi"))
                .endSpec()
                .build();

        assertThat(PodRequests.of(pod))
                .as("pod-level cpu, containers' memory, overhead on top of both")
                .isEqualTo(new PodRequests.Held("default/p", 3100, 210 * MI));
    }

    @ParameterizedTest(name = "cpu {0} holds {1} millicores")
    @CsvSource({"250m,250", "0.1,100", "1.5,1500", "2,2000", "100u,1", "1n,1", "0.0005,1", "1001m,1001", "1e3,1000000"})
    void cpuIsCountedInMillicoresRoundedUp(String cpu, long millis) {
        assertThat(PodRequests.of(running("p", cpu + "/")).cpuMillis()).isEqualTo(millis);
    }

    @ParameterizedTest(name = "memory {0} holds {1} bytes")
    @CsvSource({
        "128Mi,134217728",
        "1G,1000000000",
        "1e3,1000",
        "1Ki,1024",
        "1.5Gi,1610612736",
        "1k,1000",
        "1Ei,1152921504606846976",
        "100m,1",
        "0.5,1",
        "7,7"
    })
    void memoryIsCountedInBytesExactly(String memory, long bytes) {
        assertThat(PodRequests.of(running("p", "/" + memory)).memoryBytes()).isEqualTo(bytes);
    }

    @Test
    void aPodReadFromTheApiServersJsonIsCounted() {
        Pod pod = Serialization.unmarshal("""
                {"metadata": {"namespace": "ns", "name": "json"},
                 "spec": {"nodeName": "n1",
                          "initContainers": [{"name": "s", "restartPolicy": "Always",
                                              "resources": {"requests": {"cpu": 0.25, "memory": "1e3"}}}],
                          "containers": [{"name": "a", "resources": {"requests": {"cpu": 2, "memory": "64Mi"},
                                                                     "limits": {"cpu": 4, "memory": "1Gi"}}}]},
                 "status": {"phase": "Running"}}
                """, Pod.class);

        assertThat(PodRequests.of(pod)).isEqualTo(new PodRequests.Held("ns/json", 2250, 64 * MI + 1000));
    }

    @Test
    void fractionsAreAddedExactlyBeforeThePodIsRoundedUp() {
        assertThat(PodRequests.of(running("p", "0.0004/0.5", "0.0004/0.5")))
                .isEqualTo(new PodRequests.Held("default/p", 1, 1));
    }

    @ParameterizedTest(name = "\"{0}\" {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "12x|is not a quantity such as 250m, 0.5, 128Mi or 1G",
                "1Zi|is not a quantity such as 250m, 0.5, 128Mi or 1G",
                "1.5.2|is not a quantity such as 250m, 0.5, 128Mi or 1G",
                "1K|is not a quantity such as 250m, 0.5, 128Mi or 1G",
                "-1|is negative",
                "9Ei|is larger than 9223372036854775807",
                "1e400|is larger than 9223372036854775807",
                "1e4000|is not a quantity such as 250m, 0.5, 128Mi or 1G"
            })
    void aMalformedQuantityNamesThePodTheContainerAndTheField(String memory, String why) {
        Pod pod = pod(
                        "web-0",
                        "Running",
                        List.of(container("setup", "1/1Mi")),
                        List.of(container("app", "1/1Mi"), container("proxy", "1/" + memory)))
                .build();

        assertThatThrownBy(() -> PodRequests.of(List.of(running("ok", "1/1Mi"), pod)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Pod default/web-0, container proxy: resources.requests.memory \"" + memory + "\" " + why
                        + ".");
    }

    @Test
    void aMalformedOverheadOrPodLevelRequestIsNamedByItsField() {
        Pod overhead = running("o", "1/1Mi");
        overhead.getSpec().setOverhead(Map.of("cpu", new Quantity("lots")));
        Pod podLevel = running("l", "1/1Mi");
        podLevel.getSpec().setResources(new io.fabric8.kubernetes.api.model.ResourceRequirements());
        podLevel.getSpec().getResources().setRequests(Map.of("memory", new Quantity()));

        assertThatThrownBy(() -> PodRequests.of(overhead))
                .hasMessage("Pod default/o, spec.overhead.cpu \"lots\" is not a quantity such as 250m, 0.5, 128Mi or"
                        + " 1G.");
        assertThatThrownBy(() -> PodRequests.of(podLevel))
                .hasMessage("Pod default/l, spec.resources.requests.memory \"\" is empty.");
    }

    @Test
    void requestsAddingUpPastWhatCanBeCountedAreRefused() {
        Pod big = running("big", "/7Ei", "/1Ei");

        assertThatThrownBy(() -> PodRequests.of(big))
                .hasMessage("Pod default/big's requests add up past 9223372036854775807 millicores or bytes.");
        assertThatThrownBy(() -> PodRequests.of(List.of(running("a", "/7Ei"), running("b", "/1Ei"))))
                .hasMessage("The requests of the Pods bound to the node add up past 9223372036854775807 at Pod"
                        + " default/b.");
    }
}
