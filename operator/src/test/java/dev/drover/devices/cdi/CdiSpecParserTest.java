package dev.drover.devices.cdi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CdiSpecParserTest {

    /** As nvidia-ctk cdi generate writes it, shortened. */
    static final String NVIDIA_YAML = """
            cdiVersion: 0.5.0
            kind: nvidia.com/gpu
            devices:
              - name: "0"
                containerEdits:
                  deviceNodes:
                    - path: /dev/nvidia0
              - name: GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f
                containerEdits:
                  deviceNodes:
                    - path: /dev/nvidia0
            containerEdits:
              env:
                - NVIDIA_VISIBLE_DEVICES=void
              deviceNodes:
                - path: /dev/nvidiactl
                - path: /dev/nvidia-uvm
              hooks:
                - hookName: createContainer
                  path: /usr/bin/nvidia-cdi-hook
                  args: [nvidia-cdi-hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]
              mounts:
                - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
                  containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
                  options: [ro, nosuid, nodev, bind]
            """;

    static String json(String deviceEdits) {
        return """
                {"cdiVersion": "0.6.0", "kind": "example.com/dev",
                 "devices": [{"name": "one", "containerEdits": %s}]}
                """.formatted(deviceEdits);
    }

    @Test
    void aSpecAsNvidiaCtkWritesItIsRead() throws Exception {
        CdiSpec spec = CdiSpecParser.parse(NVIDIA_YAML, "nvidia.yaml", true);
        assertThat(spec.kind()).isEqualTo("nvidia.com/gpu");
        assertThat(spec.devices()).containsOnlyKeys("0", "GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f");
        assertThat(spec.devices().get("0").deviceNodes())
                .containsExactly(new CdiDeviceNode("/dev/nvidia0", null, null, null, null, null, null, null, null));
        assertThat(spec.edits().env()).containsExactly("NVIDIA_VISIBLE_DEVICES=void");
        assertThat(spec.edits().mounts().getFirst().options()).containsExactly("ro", "nosuid", "nodev", "bind");
        assertThat(spec.edits().hooks().getFirst().args()).startsWith("nvidia-cdi-hook", "update-ldcache");
    }

    @Test
    void aJsonFileWithEveryDeviceNodeFieldIsRead(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("example.json"), json("""
                {"deviceNodes": [{"path": "/dev/x0", "hostPath": "/dev/null", "type": "c", "major": 1, "minor": 3,
                  "fileMode": 432, "permissions": "wr", "uid": 0, "gid": 44}]}"""));
        CdiSpec spec = CdiSpecParser.parse(file);
        assertThat(spec.source()).isEqualTo(file.toString());
        assertThat(spec.devices().get("one").deviceNodes())
                .containsExactly(new CdiDeviceNode("/dev/x0", "/dev/null", 'c', 1L, 3L, 0660, "rw", 0L, 44L));
    }

    @Test
    void aSymbolicLinkIsNotRead(@TempDir Path dir) throws Exception {
        Path real = Files.writeString(dir.resolve("real.txt"), json("{}"));
        Path link = Files.createSymbolicLink(dir.resolve("link.json"), real);
        assertThatThrownBy(() -> CdiSpecParser.parse(link))
                .isInstanceOf(CdiException.class)
                .hasMessageContaining("is a symbolic link");
        assertThatThrownBy(() -> CdiSpecParser.parse(Files.createDirectory(dir.resolve("dir.json"))))
                .hasMessageContaining("is not a regular file");
    }

    @Test
    void anOversizeFileIsRefusedBeforeItIsRead(@TempDir Path dir) throws Exception {
        Path big = Files.write(dir.resolve("big.json"), new byte[CdiSpecParser.MAX_FILE_BYTES + 1]);
        assertThatThrownBy(() -> CdiSpecParser.parse(big)).hasMessageContaining("more than the 1048576 allowed");
    }

    @Test
    void relativeOrUncleanPathsAreRefused() {
        assertThatThrownBy(() -> parse(json("{\"mounts\": [{\"hostPath\": \"lib/x.so\", \"containerPath\": \"/x\"}]}")))
                .hasMessageContaining(
                        "devices[0].containerEdits.mounts[0].hostPath \"lib/x.so\" is not an absolute path");
        assertThatThrownBy(
                        () -> parse(json("{\"mounts\": [{\"hostPath\": \"/x\", \"containerPath\": \"/a/../etc\"}]}")))
                .hasMessageContaining("\"/a/../etc\" is not a clean path");
        assertThatThrownBy(
                        () -> parse(json("{\"mounts\": [{\"hostPath\": \"/x\", \"containerPath\": \"/proc/sys\"}]}")))
                .hasMessageContaining("would cover the root, /proc or /sys");
        assertThatThrownBy(() -> parse(json("{\"deviceNodes\": [{\"path\": \"/etc/passwd\"}]}")))
                .hasMessageContaining("\"/etc/passwd\" is not under /dev/");
        assertThatThrownBy(() -> parse(json("{\"hooks\": [{\"hookName\": \"prestart\", \"path\": \"hook\"}]}")))
                .hasMessageContaining("hooks[0].path \"hook\" is not an absolute path");
    }

    @Test
    void badNamesAndUnappliedEditsRefuseTheWholeFile() {
        assertThatThrownBy(() -> parse(json("{}").replace("example.com/dev", "no-class")))
                .hasMessageContaining("kind \"no-class\" is not vendor/class");
        assertThatThrownBy(() -> parse(json("{}").replace("\"one\"", "\"-bad\\u001b\"")))
                .hasMessageContaining("devices[0].name \"-bad\\u001b\" is not a CDI device name");
        assertThatThrownBy(() -> parse(json("{\"intelRdt\": {}}")))
                .hasMessageContaining("containerEdits.intelRdt is not an edit Drover applies");
        assertThatThrownBy(() -> parse(json("{\"env\": [\"1BAD=x\"]}"))).hasMessageContaining("is not NAME=value");
        assertThatThrownBy(
                        () -> parse(
                                json(
                                        "{\"mounts\": [{\"hostPath\": \"/x\", \"containerPath\": \"/x\", \"options\": [\"rshared\"]}]}")))
                .hasMessageContaining("\"rshared\" is not an option Drover applies");
        assertThatThrownBy(() -> parse(json("{\"deviceNodes\": [{\"path\": \"/dev/x\", \"type\": \"p\"}]}")))
                .hasMessageContaining("\"p\" is not c, u (character) or b (block)");
        assertThatThrownBy(() -> parse(json("{}").replace("0.6.0", "latest")))
                .hasMessageContaining("cdiVersion \"latest\" is not a version");
        assertThatThrownBy(() -> parse("[1]")).hasMessageContaining("must be an object");
        assertThatThrownBy(() -> parse("{")).hasMessageContaining("is not valid JSON");
    }

    @Test
    void countsAreBounded() {
        StringBuilder many = new StringBuilder("{\"cdiVersion\": \"0.6.0\", \"kind\": \"a.b/c\", \"devices\": [");
        for (int i = 0; i <= CdiSpecParser.MAX_DEVICES; i++) {
            many.append(i == 0 ? "" : ",").append("{\"name\": \"d").append(i).append("\", \"containerEdits\": {}}");
        }
        assertThatThrownBy(() -> parse(many + "]}")).hasMessageContaining("1025 devices, more than the 1024 allowed");
        String env = "\"A=1\",".repeat(CdiSpecParser.MAX_EDITS) + "\"A=1\"";
        assertThatThrownBy(() -> parse(json("{\"env\": [" + env + "]}")))
                .hasMessageContaining("has 257 entries, more than the 256 allowed");
        assertThatThrownBy(() -> parse(json("{\"env\": [\"A=" + "x".repeat(5000) + "\"]}")))
                .hasMessageContaining("is 5002 characters, more than the 4096 allowed");
        assertThatThrownBy(() -> parse(json("{}").replace("}]}", "}, {\"name\": \"one\", \"containerEdits\": {}}]}")))
                .hasMessageContaining("devices[1].name \"one\" appears more than once");
    }

    private static CdiSpec parse(String text) throws CdiException {
        return CdiSpecParser.parse(text, "spec.json", false);
    }
}
