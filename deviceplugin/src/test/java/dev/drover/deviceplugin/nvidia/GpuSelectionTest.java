package dev.drover.deviceplugin.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.common.ConfigReader;
import dev.drover.deviceplugin.nvidia.GpuSelection.Candidate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GpuSelectionTest {

    private static final String A = "GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f";
    private static final String B = "GPU-5d7e9a0b-6c1f-4e2a-8b3d-9c0e1f2a3b4c";
    private static final String MIG = "MIG-1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b";

    private static final Candidate GPU_0 = Candidate.whole(A, 0);
    private static final Candidate GPU_1 = Candidate.whole(B, 1);
    private static final Candidate MIG_OF_1 = new Candidate(MIG, OptionalInt.of(1), Optional.of(B));

    private record Read(GpuSelection selection, List<String> problems) {}

    private static Read read(Map<String, Object> config) {
        ConfigReader r = new ConfigReader(config);
        GpuSelection s = GpuSelection.read(r);
        return new Read(s, r.problems());
    }

    @Test
    void withoutSettingsEveryGpuIsManaged() {
        Read r = read(Map.of());
        assertThat(r.problems()).isEmpty();
        assertThat(r.selection().managesAll()).isTrue();
        assertThat(List.of(GPU_0, GPU_1, MIG_OF_1)).allMatch(r.selection()::manages);
    }

    @Test
    void devicesByUuidManageOnlyThoseAndTheirMigDevices() {
        Read r = read(Map.of("devices", List.of(B)));
        assertThat(r.problems()).isEmpty();
        assertThat(r.selection().manages(GPU_0)).isFalse();
        assertThat(r.selection().manages(GPU_1)).isTrue();
        assertThat(r.selection().manages(MIG_OF_1)).isTrue();
    }

    @Test
    void devicesByIndexWrittenAsNumbersOrText() {
        for (Object zero : List.of(0, "0", " 00 ")) {
            Read r = read(Map.of("devices", List.of(zero)));
            assertThat(r.problems()).as("%s", zero).isEmpty();
            assertThat(r.selection().manages(GPU_0)).isTrue();
            assertThat(r.selection().manages(GPU_1)).isFalse();
            assertThat(r.selection().manages(MIG_OF_1)).isFalse();
        }
    }

    @Test
    void mixedEntriesAndAnExclusionThatWins() {
        Read r = read(Map.of("devices", List.of(0, MIG), "excludeDevices", List.of(A)));
        assertThat(r.problems()).isEmpty();
        assertThat(r.selection().manages(GPU_0)).isFalse();
        assertThat(r.selection().manages(GPU_1)).isFalse();
        assertThat(r.selection().manages(MIG_OF_1)).isTrue();
    }

    @Test
    void excludeAloneLeavesTheRest() {
        Read r = read(Map.of("excludeDevices", List.of(1)));
        assertThat(r.selection().manages(GPU_0)).isTrue();
        assertThat(r.selection().manages(GPU_1)).isFalse();
        assertThat(r.selection().manages(MIG_OF_1)).isFalse();
    }

    @Test
    void invalidValuesAreProblemsNamingTheEntry() {
        assertThat(read(Map.of("devices", List.of(0, "all"))).problems())
                .singleElement()
                .asString()
                .startsWith("config.devices[1]: \"all\" is neither a GPU index");
        assertThat(read(Map.of("excludeDevices", List.of(-1))).problems())
                .singleElement()
                .asString()
                .startsWith("config.excludeDevices[0]: \"-1\"");
        assertThat(read(Map.of("devices", List.of(1024))).problems()).hasSize(1);
        assertThat(read(Map.of("devices", List.of("GPU-a b"))).problems()).hasSize(1);
        assertThat(read(Map.of("devices", List.of("GPU-x$(reboot)"))).problems())
                .hasSize(1);
        assertThat(read(Map.of("devices", List.of(1.5))).problems())
                .singleElement()
                .asString()
                .contains("is not a list of names or numbers");
        assertThat(read(Map.of("devices", "0,1")).problems()).hasSize(1);
        assertThat(read(Map.of("devices", List.of())).problems())
                .singleElement()
                .asString()
                .contains("leave it out to manage every GPU");
    }

    @Test
    void aHugeListIsOneProblem() {
        List<Object> many = new ArrayList<>(Collections.nCopies(100_000, "x"));
        assertThat(read(Map.of("devices", many)).problems())
                .singleElement()
                .asString()
                .contains("at most 1024");
    }

    @Test
    void entriesNamingNoGpuAreReportedForAWarning() {
        GpuSelection s = new GpuSelection(Optional.of(Set.of("7", A)), Set.of("GPU-gone"));
        assertThat(s.unmatched(List.of(GPU_0, GPU_1)))
                .containsExactlyInAnyOrder("devices: 7", "excludeDevices: GPU-gone");
        assertThat(s.unmatched(List.of(GPU_0, GPU_1, Candidate.whole("GPU-gone", 7))))
                .isEmpty();
    }
}
