package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.Decision;
import dev.drover.admission.NodeAdmission;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.AllocId;
import dev.drover.volumes.HostVolume;
import dev.drover.volumes.HostVolumes;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Node admission of an allocation's volumes: only host volumes this agent has and lends to its namespace. */
class VolumeAdmissionTest {

    private final NodeAdmission node = new NodeAdmission(new CpuMemory(4000, 4096));
    private final Admissions admissions = new Admissions(
            node,
            null,
            () -> {},
            new HostVolumes(List.of(
                    new HostVolume("models", Path.of("/srv/models"), true, Set.of("*")),
                    new HostVolume("scratch", Path.of("/srv/scratch"), false, Set.of("team-a")),
                    new HostVolume("private", Path.of("/srv/private"), false, Set.of()))));

    private static Allocation alloc(String namespace, String volumes) {
        return Serialization.unmarshal(
                "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: a, namespace: " + namespace
                        + "}\nspec:\n  nodeName: n\n  volumes: " + volumes
                        + "\n  tasks: [{name: web, driver: mock, resources: {cpuMillis: 100}}]\n",
                Allocation.class);
    }

    private Decision takeOn(String namespace, String volumes) throws InterruptedException {
        return admissions
                .takeOn(new AllocId(namespace, "a"), alloc(namespace, volumes))
                .decision();
    }

    @Test
    void volumesOfHostVolumesLentToTheNamespaceAreAdmitted() throws InterruptedException {
        Decision d = takeOn("team-a", "[{name: m, hostVolume: models}, {name: s, hostVolume: scratch}]");
        assertThat(d.admitted()).isTrue();
        assertThat(node.usage().requested()).isEqualTo(new CpuMemory(100, 0));
    }

    @Test
    void aHostVolumeTheAgentDoesNotHaveIsRefusedAsUnknownNamingTheVolume() throws InterruptedException {
        Decision d = takeOn("team-a", "[{name: data, hostVolume: datasets}]");
        assertThat(d.admitted()).isFalse();
        assertThat(d.reason()).isEqualTo("UnknownHostVolume");
        assertThat(d.message())
                .isEqualTo("The node cannot give this allocation its volumes: volume \"data\" names host volume"
                        + " \"datasets\", which this node's agent does not have (it has models, private, scratch)");
        assertThat(node.usage().requested()).isEqualTo(CpuMemory.ZERO);
    }

    @Test
    void aHostVolumeNotLentToTheNamespaceIsForbiddenAndOneListingNoNamespaceIsLentToNone() throws InterruptedException {
        Decision d = takeOn("team-b", "[{name: s, hostVolume: scratch}]");
        assertThat(d.admitted()).isFalse();
        assertThat(d.reason()).isEqualTo("HostVolumeForbidden");
        assertThat(d.message())
                .contains("volume \"s\": host volume \"scratch\" does not let namespace \"team-b\" use it");
        assertThat(takeOn("team-a", "[{name: p, hostVolume: private}]").reason())
                .isEqualTo("HostVolumeForbidden");
    }

    @Test
    void anUpdateNamingAnUnknownHostVolumeIsRefusedAndTheAllocationKeepsItsShare() throws InterruptedException {
        assertThat(takeOn("team-a", "[{name: m, hostVolume: models}]").admitted())
                .isTrue();
        Decision d = admissions.resize(new AllocId("team-a", "a"), alloc("team-a", "[{name: m, hostVolume: gone}]"));
        assertThat(d.reason()).isEqualTo("UnknownHostVolume");
        assertThat(node.holds(new AllocId("team-a", "a"))).isTrue();
    }
}
