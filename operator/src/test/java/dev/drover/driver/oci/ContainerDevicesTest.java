package dev.drover.driver.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.devices.cdi.CdiDeviceNode;
import dev.drover.devices.cdi.CdiHook;
import dev.drover.devices.cdi.CdiMount;
import dev.drover.devices.cdi.CdiRegistry;
import dev.drover.devices.cdi.ContainerEdits;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskAttachments;
import dev.drover.driver.TaskDeviceNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ContainerDevicesTest {

    static ObjectNode spec() {
        return OciSpec.of(
                new OciSpec.Container(
                        List.of("/bin/true"),
                        List.of("PATH=/bin", "NVIDIA_VISIBLE_DEVICES=GPU-a"),
                        "/",
                        0,
                        0,
                        List.of(),
                        Capabilities.DEFAULT,
                        true,
                        false,
                        false,
                        64,
                        "task",
                        List.of(),
                        "drover-test",
                        null),
                "rootfs");
    }

    static final CdiDeviceNode GPU0 =
            new CdiDeviceNode("/dev/nvidia0", "/dev/nvidia0", 'c', 195L, 0L, 0666, "rw", 0L, 0L);
    static final CdiDeviceNode CTL =
            new CdiDeviceNode("/dev/nvidiactl", "/dev/nvidiactl", 'c', 195L, 255L, 0660, "rwm", 0L, 44L);

    @Test
    void eachNodeIsCreatedAndAllowedAloneAndTheSpecsVariablesWin() throws Exception {
        ObjectNode spec = spec();
        ContainerDevices.apply(
                spec,
                new ContainerEdits(
                        List.of("NVIDIA_VISIBLE_DEVICES=void", "LD=1"), List.of(GPU0, CTL, CTL), List.of(), List.of()));
        assertThat(spec.path("process").path("env").toString())
                .isEqualTo("[\"PATH=/bin\",\"NVIDIA_VISIBLE_DEVICES=void\",\"LD=1\"]");
        assertThat(spec.path("linux").path("devices").toString())
                .isEqualTo("[{\"path\":\"/dev/nvidia0\",\"type\":\"c\",\"major\":195,\"minor\":0,\"fileMode\":438,"
                        + "\"uid\":0,\"gid\":0},{\"path\":\"/dev/nvidiactl\",\"type\":\"c\",\"major\":195,\"minor\":255,"
                        + "\"fileMode\":432,\"uid\":0,\"gid\":44}]");
        assertThat(spec.path("linux").path("resources").path("devices").toString())
                .as("everything denied first, then just these")
                .isEqualTo("[{\"allow\":false,\"access\":\"rwm\"},"
                        + "{\"allow\":true,\"type\":\"c\",\"major\":195,\"minor\":0,\"access\":\"rw\"},"
                        + "{\"allow\":true,\"type\":\"c\",\"major\":195,\"minor\":255,\"access\":\"rwm\"}]");
    }

    @Test
    void mountsAreNosuidBindsAndHooksGoToTheirPoint() throws Exception {
        ObjectNode spec = spec();
        ContainerDevices.apply(
                spec,
                new ContainerEdits(
                        List.of(),
                        List.of(),
                        List.of(new CdiMount("/usr/lib/libcuda.so.1", "/usr/lib/libcuda.so.1", List.of("ro"))),
                        List.of(new CdiHook(
                                "createContainer",
                                "/usr/bin/nvidia-cdi-hook",
                                List.of("h", "update-ldcache"),
                                List.of(),
                                5))));
        assertThat(spec.path("mounts").get(spec.path("mounts").size() - 1).toString())
                .isEqualTo(
                        "{\"destination\":\"/usr/lib/libcuda.so.1\",\"type\":\"bind\",\"source\":\"/usr/lib/libcuda.so.1\","
                                + "\"options\":[\"ro\",\"bind\",\"nosuid\"]}");
        assertThat(spec.path("hooks").toString())
                .isEqualTo(
                        "{\"createContainer\":[{\"path\":\"/usr/bin/nvidia-cdi-hook\",\"args\":[\"h\",\"update-ldcache\"],"
                                + "\"timeout\":5}]}");
    }

    @Test
    void aMountOverDroversOwnPathsIsRefused() {
        for (String to : List.of("/alloc", "/secrets/token", "/dev/shm", "/tmp")) {
            assertThatThrownBy(() -> ContainerDevices.apply(
                            spec(),
                            new ContainerEdits(
                                    List.of(), List.of(), List.of(new CdiMount("/x", to, List.of())), List.of())))
                    .isInstanceOf(DriverStartException.class)
                    .hasMessageContaining("would cover Drover's own " + to);
        }
    }

    @Test
    void pluginNodesAreNumberedFromTheHostAndAnUnknownNameFailsTheStartForGood() throws Exception {
        TaskAttachments lent = new TaskAttachments.Builder()
                .deviceNode(new TaskDeviceNode("/dev/fake", "/dev/null", "rw"))
                .build();
        CdiRegistry none = new CdiRegistry(List.of(Path.of("/nonexistent/cdi")), Set.of());
        assertThat(ContainerDevices.resolve(lent, none).deviceNodes())
                .containsExactly(new CdiDeviceNode("/dev/fake", "/dev/null", 'c', 1L, 3L, 0666, "rw", 0L, 0L));
        TaskAttachments named =
                new TaskAttachments.Builder().cdiDevice("nvidia.com/gpu=GPU-a").build();
        assertThatThrownBy(() -> ContainerDevices.resolve(named, none))
                .isInstanceOfSatisfying(
                        DriverStartException.class,
                        e -> assertThat(e.recoverable()).isFalse())
                .hasMessageStartingWith(
                        "cannot give the container its devices: unknown CDI device \"nvidia.com/gpu=GPU-a\"");
    }
}
