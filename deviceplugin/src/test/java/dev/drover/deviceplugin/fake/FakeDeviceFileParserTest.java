package dev.drover.deviceplugin.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.DevicePluginException;
import dev.drover.deviceplugin.Unit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeDeviceFileParserTest {

    private static final String ONE_GPU = """
            groups:
              - vendor: nvidia
                type: gpu
                model: Tesla T4
                attributes: {memory: 15360 MiB, compute_capability: "7.5", ecc: true, slots: 2, ratio: 0.5}
                instances:
                  - id: GPU-a
            """;

    @Test
    void shippedExampleHasTwoNvidiaGpusWithStats() throws Exception {
        FakeDeviceFile file = FakeDeviceFileParser.parse(Path.of("../examples/devices/fake-gpus.yaml"));
        assertThat(file.groups()).hasSize(1);
        FakeDeviceFile.Group g = file.groups().getFirst();
        assertThat(g.vendor()).isEqualTo("nvidia");
        assertThat(g.type()).isEqualTo("gpu");
        assertThat(g.instances()).hasSize(2).allSatisfy(i -> {
            assertThat(i.id()).startsWith("GPU-");
            assertThat(i.stats()).isPresent();
            assertThat(i.pciBusId()).isPresent();
        });
        assertThat(g.instances())
                .extracting(i -> i.gpu().orElseThrow())
                .as("placed as NVML would, for dcgm-exporter's labels")
                .containsExactly(
                        DeviceInstance.GpuSlot.whole(0, g.instances().get(0).id()),
                        DeviceInstance.GpuSlot.whole(1, g.instances().get(1).id()));
        assertThat(g.attributes().get("memory")).isEqualTo(AttributeValue.integer(15360, Unit.MIB));
    }

    @Test
    void attributesAreTyped() throws Exception {
        var attrs = FakeDeviceFileParser.parse(ONE_GPU, "t.yaml")
                .groups()
                .getFirst()
                .attributes();
        assertThat(attrs.get("memory")).isEqualTo(AttributeValue.integer(15360, Unit.MIB));
        assertThat(attrs.get("compute_capability")).isEqualTo(AttributeValue.text("7.5"));
        assertThat(attrs.get("ecc")).isEqualTo(AttributeValue.bool(true));
        assertThat(attrs.get("slots")).isEqualTo(AttributeValue.integer(2, Unit.NONE));
        assertThat(attrs.get("ratio")).isEqualTo(AttributeValue.decimal(0.5, Unit.NONE));
    }

    @Test
    void aMigDeviceNamesItsGpuAndGpuInstance() throws Exception {
        FakeDeviceFile.Instance mig = FakeDeviceFileParser.parse(
                        ONE_GPU.replace(
                                "- id: GPU-a", "- {id: MIG-a, gpuIndex: 3, migParent: GPU-p, gpuInstanceId: 7}"),
                        "t.yaml")
                .groups()
                .getFirst()
                .instances()
                .getFirst();
        assertThat(mig.gpu()).contains(new DeviceInstance.GpuSlot(3, "GPU-p", OptionalInt.of(7)));
        assertThat(FakeDeviceFileParser.parse(ONE_GPU, "t.yaml")
                        .groups()
                        .getFirst()
                        .instances()
                        .getFirst()
                        .gpu())
                .as("not given: not known")
                .isEmpty();
    }

    @Test
    void aHalfGivenGpuPlaceIsRefusedNamingWhatIsMissing() {
        assertError(
                ONE_GPU.replace("- id: GPU-a", "- {id: MIG-a, gpuIndex: 0, migParent: GPU-p}"),
                "groups[0].instances[0].gpuInstanceId is missing; expected given with migParent");
        assertError(
                ONE_GPU.replace("- id: GPU-a", "- {id: MIG-a, migParent: GPU-p, gpuInstanceId: 1}"),
                "groups[0].instances[0].gpuIndex is missing; expected given with migParent");
        assertError(
                ONE_GPU.replace("- id: GPU-a", "- {id: GPU-a, gpuIndex: -1}"),
                "groups[0].instances[0].gpuIndex is '-1'; expected a whole number from 0 to 1023");
    }

    @Test
    void missingInstanceIdNamesTheField() {
        assertError(
                ONE_GPU.replace("- id: GPU-a", "- pciBusId: \"0000:01:00.0\""),
                "t.yaml: groups[0].instances[0].id is missing; expected a non-empty string");
    }

    @Test
    void misspeltFieldIsNamedWithTheKnownOnes() {
        assertError(ONE_GPU.replace("model:", "modle:"), "groups[0].modle: unknown field; known here:");
    }

    @Test
    void unknownUnitIsNamed() {
        assertError(
                ONE_GPU.replace("15360 MiB", "15360 Mib"),
                "groups[0].attributes.memory is '15360 Mib'; expected a known unit");
    }

    @Test
    void duplicateIdsInTheFileAreNamedWithBothPlaces() {
        String two = ONE_GPU + "      - id: GPU-a\n";
        assertError(two, "groups[0].instances[1].id: 'GPU-a' is already used at groups[0].instances[0].id");
    }

    @Test
    void faultFieldsAreChecked() throws Exception {
        assertError(
                ONE_GPU + "faults:\n  - {fault: explode}\n",
                "faults[0].fault is 'explode'; expected one of crash, error, hang, invalid");
        assertError(
                ONE_GPU + "faults:\n  - {fault: crash, from: 10}\n",
                "faults[0].from is '10'; expected a duration with a unit");
        assertError(ONE_GPU + "faults:\n  - {fault: crash, duration: 5s}\n", "faults[0].duration");
        assertError(ONE_GPU + "faults:\n  - {fault: invalid, call: stats}\n", "faults[0].call is 'stats'");

        FakeDeviceFile.Fault f = FakeDeviceFileParser.parse(
                        ONE_GPU
                                + "faults:\n  - {fault: hang, call: stats, afterCalls: 2, from: 1m, until: 2m, duration: 5s}\n",
                        "t.yaml")
                .faults()
                .getFirst();
        assertThat(f)
                .isEqualTo(new FakeDeviceFile.Fault(
                        FakeDeviceFile.Kind.HANG,
                        FakeDeviceFile.Call.STATS,
                        2,
                        Duration.ofMinutes(1),
                        Optional.of(Duration.ofMinutes(2)),
                        Optional.of(Duration.ofSeconds(5)),
                        FakeDeviceFile.InvalidOutput.DUPLICATE_IDS,
                        "scripted hang"));
    }

    /** Overflow escaped as an ArithmeticException and a negative ISO duration was taken as a negative hang. */
    @Test
    void hostileDurationsAreRefusedNamingTheField() {
        assertError(
                ONE_GPU + "faults:\n  - {fault: hang, duration: 9999999999999999h}\n",
                "t.yaml: faults[0].duration: \"9999999999999999h\" is too long a duration");
        assertError(
                ONE_GPU + "faults:\n  - {fault: hang, duration: PT-10S}\n",
                "t.yaml: faults[0].duration: \"PT-10S\" is not a duration");
        assertError(
                ONE_GPU + "faults:\n  - {fault: crash, from: 5sec}\n",
                "t.yaml: faults[0].from: \"5sec\" is not a duration");
        assertError(
                ONE_GPU + "faults:\n  - {fault: crash, from: " + "1s".repeat(5000) + "}\n",
                "(10000 characters) is too long for a duration");
    }

    /** One grammar: a file written with ISO-8601 durations is refused with the Go form to write instead. */
    @Test
    void isoDurationsAreRefusedWithTheirGoForm() {
        assertError(
                ONE_GPU + "faults:\n  - {fault: crash, from: PT1M30S}\n",
                "faults[0].from: \"PT1M30S\" is not a duration (use a number with a unit: ns, us, ms, s, m, h; "
                        + "e.g. 250ms, 15s, 1h30m); write \"PT1M30S\" as 1m30s");
    }

    @Test
    void healthWindowMustEndAfterItStarts() {
        assertError(
                ONE_GPU + "        unhealthy: [{from: 2m, until: 1m}]\n",
                "groups[0].instances[0].unhealthy[0].until is '1m'; expected a time after 'from'");
    }

    @Test
    void negativeOrFractionalStatsAreRejected() {
        assertError(
                ONE_GPU + "        stats: {memoryUsedMiB: 1.5}\n",
                "groups[0].instances[0].stats.memoryUsedMiB is '1.5'; expected a whole number");
        assertError(ONE_GPU + "        stats: {powerW: -1}\n", "stats.powerW is '-1'");
    }

    @Test
    void jsonFilesAreReadAsJson(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("gpus.json");
        Files.writeString(json, """
                {"groups": [{"vendor": "nvidia", "type": "gpu", "model": "A100",
                  "instances": [{"id": "GPU-x", "stats": {"gpuUtilPercent": 5}}]}]}
                """);
        FakeDeviceFile file = FakeDeviceFileParser.parse(json);
        assertThat(file.groups()
                        .getFirst()
                        .instances()
                        .getFirst()
                        .stats()
                        .orElseThrow()
                        .gpuUtilPercent())
                .hasValue(5.0);
    }

    @Test
    void unreadableFileSaysWhatToPass(@TempDir Path dir) {
        assertThatThrownBy(() -> FakeDeviceFileParser.parse(dir.resolve("nope.yaml")))
                .isInstanceOf(DevicePluginException.class)
                .hasMessageContaining("nope.yaml cannot be read")
                .hasMessageContaining("--device-plugin fake:FILE");
    }

    @Test
    void brokenYamlIsReportedAsSuch() {
        assertError("groups: [", "t.yaml: not valid YAML");
    }

    private static void assertError(String yaml, String message) {
        assertThatThrownBy(() -> FakeDeviceFileParser.parse(yaml, "t.yaml"))
                .isInstanceOf(DevicePluginException.class)
                .hasMessageContaining(message);
    }
}
