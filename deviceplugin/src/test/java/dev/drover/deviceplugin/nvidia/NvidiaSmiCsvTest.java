package dev.drover.deviceplugin.nvidia;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.Unit;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class NvidiaSmiCsvTest {

    private static final Instant AT = Instant.parse("2026-01-01T00:00:00Z");

    // As printed by nvidia-smi with FIELDS and --format=csv,noheader,nounits; the second GPU cannot
    // report power draw, ECC or clocks.
    private static final String OUTPUT = """
            GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f, Tesla T4, 00000000:00:1E.0, 15360, 2048, 37, 12, 48, 31.50, 70.00, 1590, 5000, 1590, 5001, 550.54.15, 0, 0
            GPU-5d7e9a0b-6c1f-4e2a-8b3d-9c0e1f2a3b4c, NVIDIA GeForce RTX 3090, 00000000:65:00.0, 24576, 1, 0, 0, 35, [N/A], 350.00, [Not Supported], [Not Supported], 2100, 9751, 550.54.15, [N/A], [N/A]
            """;

    @Test
    void readsEveryColumnOfEachGpu() {
        List<NvidiaSmiCsv.Gpu> gpus = NvidiaSmiCsv.parse(OUTPUT, AT);
        assertThat(gpus).hasSize(2);
        NvidiaSmiCsv.Gpu t4 = gpus.getFirst();
        assertThat(t4.uuid()).isEqualTo("GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f");
        assertThat(t4.model()).isEqualTo("Tesla T4");
        assertThat(t4.pciBusId()).hasValue("00000000:00:1E.0");
        assertThat(t4.attributes())
                .containsEntry("memory", AttributeValue.integer(15360, Unit.MIB))
                .containsEntry("power_limit", AttributeValue.integer(70, Unit.WATT))
                .containsEntry("cores_clock", AttributeValue.integer(1590, Unit.MHZ))
                .containsEntry("driver_version", AttributeValue.text("550.54.15"));
        assertThat(t4.stats().powerW()).hasValue(31.5);
        assertThat(t4.stats().memoryUsedMiB()).hasValue(2048);
        assertThat(t4.stats().eccErrorsUncorrected()).hasValue(0);
        assertThat(t4.stats().timestamp()).isEqualTo(AT);
    }

    @Test
    void notAvailableAndNotSupportedAreAbsentNotZero() {
        NvidiaSmiCsv.Gpu rtx = NvidiaSmiCsv.parse(OUTPUT, AT).get(1);
        assertThat(rtx.stats().powerW()).isEmpty();
        assertThat(rtx.stats().smClockMHz()).isEmpty();
        assertThat(rtx.stats().eccErrorsCorrected()).isEmpty();
        assertThat(rtx.stats().temperatureC()).hasValue(35);
        assertThat(rtx.stats().gpuUtilPercent()).hasValue(0);
    }

    @Test
    void unitsLeftInTheOutputAreTolerated() {
        String withUnits = OUTPUT.lines()
                .findFirst()
                .orElseThrow()
                .replace(" 15360,", " 15360 MiB,")
                .replace(" 31.50,", " 31.50 W,");
        assertThat(NvidiaSmiCsv.parse(withUnits, AT).getFirst().stats().powerW())
                .hasValue(31.5);
    }

    @Test
    void wrongColumnCountNamesTheLine() {
        assertThatThrownBy(() -> NvidiaSmiCsv.parse("\nGPU-x, Tesla T4, 15360\n", AT))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("line 2 has 3 columns, expected " + NvidiaSmiCsv.FIELDS.size());
    }

    @Test
    void nonNumberNamesTheField() {
        String bad = OUTPUT.lines().findFirst().orElseThrow().replace(" 48,", " hot,");
        assertThatThrownBy(() -> NvidiaSmiCsv.parse(bad, AT))
                .hasMessageContaining("line 1: temperature.gpu is 'hot', not a number");
    }

    @Test
    void commandAsksForTheParsedColumns() {
        assertThat(NvidiaSmiCsv.command())
                .containsExactly(
                        "nvidia-smi",
                        "--query-gpu=" + String.join(",", NvidiaSmiCsv.FIELDS),
                        "--format=csv,noheader,nounits");
    }
}
