package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.admission.CpuMemory;
import dev.drover.admission.NodeAdmission;
import dev.drover.admission.NodePorts;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.state.AllocId;
import dev.drover.state.StateDB;
import dev.drover.state.StateStores;
import dev.drover.volumes.HostVolumes;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a restore admits: the allocations that ran before the restart, with what the store's read gave them. */
class AdmissionsRestoreTest {

    private static final AllocId WEB = new AllocId("team", "web");

    private final StateDB state = StateStores.inMemory();
    private final Admissions admissions = new Admissions(
            new NodeAdmission(new CpuMemory(4000, 4096)),
            null,
            () -> {},
            HostVolumes.NONE,
            new NodePorts(new NodePorts.Range(20000, 20010)),
            state);

    @AfterEach
    void close() {
        state.close();
    }

    private static Allocation withPort() {
        return Serialization.unmarshal(
                "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: web, namespace: team}\n"
                        + "spec:\n  nodeName: n\n  network: {ports: [{name: http, to: 8080}]}\n"
                        + "  tasks: [{name: web, driver: mock}]\n",
                Allocation.class);
    }

    @Test
    void aRestoredAllocationKeepsTheHostPortsTheRestoresReadOfTheStoreGaveIt() {
        admissions.restored(Map.of(WEB, withPort()), Map.of(WEB, Map.of("http", 20007)));

        assertThat(admissions.hostPorts(WEB)).containsExactlyEntriesOf(Map.of("http", 20007));
    }

    @Test
    void aRestoredAllocationTheStoreKeptNoPortsForGetsFreeOnesAndStoresThem() {
        admissions.restored(Map.of(WEB, withPort()), Map.of());

        assertThat(admissions.hostPorts(WEB)).containsOnlyKeys("http");
        assertThat(state.getPorts(WEB)).contains(admissions.hostPorts(WEB));
    }
}
