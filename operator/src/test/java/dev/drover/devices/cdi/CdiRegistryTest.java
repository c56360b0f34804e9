package dev.drover.devices.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CdiRegistryTest {

    @TempDir
    Path tmp;

    Path etc;
    Path run;

    @BeforeEach
    void dirs() throws Exception {
        etc = Files.createDirectory(tmp.resolve("etc-cdi"));
        run = Files.createDirectory(tmp.resolve("run-cdi"));
    }

    CdiRegistry registry(String... allowedHooks) {
        return new CdiRegistry(List.of(etc, run, tmp.resolve("missing")), Set.of(allowedHooks));
    }

    static String spec(String kind, String device, String path, String env) {
        return """
                {"cdiVersion": "0.6.0", "kind": "%s",
                 "containerEdits": {"env": ["SPEC=%s"]},
                 "devices": [{"name": "%s", "containerEdits": {"env": ["%s"],
                   "deviceNodes": [{"path": "%s", "hostPath": "/dev/null"}]}}]}
                """.formatted(kind, kind, device, env, path);
    }

    @Test
    void namesResolveToTheirSpecsEditsWithNodesNumberedFromTheHost() throws Exception {
        Files.writeString(etc.resolve("a.json"), spec("example.com/gpu", "g0", "/dev/gpu0", "G=0"));
        Files.writeString(
                etc.resolve("b.json"),
                spec("example.com/gpu", "g1", "/dev/gpu1", "G=1").replace("example.com/gpu", "example.com/fpga"));
        ContainerEdits e = registry().resolve(List.of("example.com/gpu=g0", "example.com/fpga=g1"));
        assertThat(e.env()).containsExactly("SPEC=example.com/gpu", "G=0", "SPEC=example.com/fpga", "G=1");
        assertThat(e.deviceNodes())
                .containsExactly(
                        new CdiDeviceNode("/dev/gpu0", "/dev/null", 'c', 1L, 3L, 0666, "rwm", 0L, 0L),
                        new CdiDeviceNode("/dev/gpu1", "/dev/null", 'c', 1L, 3L, 0666, "rwm", 0L, 0L));
        assertThat(registry().resolve(List.of())).isEqualTo(ContainerEdits.NONE);
    }

    @Test
    void anUnknownNameIsRefusedSayingWhereItWasLookedForAndWhatWasRefused() throws Exception {
        Files.writeString(etc.resolve("broken.json"), "{\"cdiVersion\": 1}");
        Files.createSymbolicLink(run.resolve("nvidia.yaml"), etc.resolve("broken.json"));
        assertThatThrownBy(() -> registry().resolve(List.of("nvidia.com/gpu=GPU-1")))
                .isInstanceOf(CdiException.class)
                .hasMessageStartingWith("unknown CDI device \"nvidia.com/gpu=GPU-1\": no spec file in " + etc)
                .hasMessageContaining("generate the NVIDIA spec with nvidia-ctk cdi generate")
                .hasMessageContaining("broken.json: cdiVersion must be a string")
                .hasMessageContaining("nvidia.yaml is a symbolic link");
        assertThatThrownBy(() -> registry().resolve(List.of("no kind")))
                .hasMessage("\"no kind\" is not a CDI device name (vendor/class=name)");
    }

    @Test
    void aLaterDirectoryWinsAndTwoFilesOfOneDirectoryAreAmbiguous() throws Exception {
        Files.writeString(etc.resolve("a.json"), spec("example.com/gpu", "g0", "/dev/old", "G=etc"));
        Files.writeString(run.resolve("a.json"), spec("example.com/gpu", "g0", "/dev/new", "G=run"));
        assertThat(registry().resolve(List.of("example.com/gpu=g0")).env()).contains("G=run");
        Files.writeString(run.resolve("b.yaml"), spec("example.com/gpu", "g0", "/dev/other", "G=other"));
        assertThatThrownBy(() -> registry().resolve(List.of("example.com/gpu=g0")))
                .hasMessageContaining("is ambiguous: " + run.resolve("a.json") + " and " + run.resolve("b.yaml"));
    }

    @Test
    void aHookRunsOnlyWhenTheAgentAllowsItsPath() throws Exception {
        Files.writeString(etc.resolve("h.json"), """
                {"cdiVersion": "0.6.0", "kind": "example.com/gpu",
                 "containerEdits": {"hooks": [{"hookName": "createContainer", "path": "/usr/bin/hook", "args": ["hook", "x"]}]},
                 "devices": [{"name": "g0", "containerEdits": {"env": ["G=0"]}}]}
                """);
        assertThatThrownBy(() -> registry().resolve(List.of("example.com/gpu=g0")))
                .hasMessageContaining("asks the runtime to run the hook /usr/bin/hook (createContainer) as root,"
                        + " which the agent's cdiAllowedHooks does not list");
        assertThat(registry("/usr/bin/hook")
                        .resolve(List.of("example.com/gpu=g0"))
                        .hooks())
                .containsExactly(
                        new CdiHook("createContainer", "/usr/bin/hook", List.of("hook", "x"), List.of(), null));
    }

    @Test
    void aNodeWhoseHostFileIsNoDeviceIsRefused() throws Exception {
        Path plain = Files.writeString(tmp.resolve("plain"), "x");
        Files.writeString(
                etc.resolve("a.json"),
                spec("example.com/gpu", "g0", "/dev/gpu0", "G=0").replace("/dev/null", plain.toString()));
        assertThatThrownBy(() -> registry().resolve(List.of("example.com/gpu=g0")))
                .hasMessage("device node /dev/gpu0: its host file " + plain + " is not a character or block device");
        Files.writeString(
                etc.resolve("a.json"),
                spec("example.com/gpu", "g0", "/dev/gpu0", "G=0").replace("/dev/null", "/dev/no-such-gpu"));
        assertThatThrownBy(() -> registry().resolve(List.of("example.com/gpu=g0")))
                .hasMessage("device node /dev/gpu0: its host file /dev/no-such-gpu does not exist");
    }
}
