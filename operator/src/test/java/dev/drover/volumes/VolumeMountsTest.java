package dev.drover.volumes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VolumeMountsTest {

    private static List<String> problems(Object raw, VolumeMounts.Where where) {
        List<String> out = new ArrayList<>();
        VolumeMounts.read(raw, where, out);
        return out;
    }

    @Test
    void aMountIsReadWithItsDefaults() {
        List<String> problems = new ArrayList<>();
        assertThat(VolumeMounts.read(
                        List.of(Map.of("volume", "data", "destination", "/srv/data")),
                        VolumeMounts.Where.ANYWHERE,
                        problems))
                .containsExactly(new VolumeMount("data", "/srv/data", false));
        assertThat(problems).isEmpty();
    }

    @Test
    void anExecTaskMountsOnlyBelowItsOwnDirectoriesSayingWhy() {
        assertThat(problems(
                        List.of(
                                Map.of("volume", "a", "destination", "/local/data"),
                                Map.of("volume", "a", "destination", "/alloc/shared/x")),
                        VolumeMounts.Where.TASK_DIRECTORIES))
                .isEmpty();
        assertThat(problems(List.of(Map.of("volume", "a", "destination", "/etc")), VolumeMounts.Where.TASK_DIRECTORIES))
                .containsExactly("config.volumeMounts[0].destination: \"/etc\" is outside the task's directories: an"
                        + " exec task shares the host's root file system, where a volume over a system path could let"
                        + " it become root, so exec mounts volumes only below /local/ and /alloc/ (its local and alloc"
                        + " directories)");
        assertThat(problems(
                        List.of(Map.of("volume", "a", "destination", "/localx/y")),
                        VolumeMounts.Where.TASK_DIRECTORIES))
                .hasSize(1);
    }

    @Test
    void hostileShapesAndSizesAreRefusedInOneLineEach() {
        assertThat(problems("data", VolumeMounts.Where.ANYWHERE))
                .containsExactly("config.volumeMounts: \"data\" is not a list of {volume, destination, readOnly}");
        assertThat(problems(
                        Collections.nCopies(100_000, Map.of("volume", "a", "destination", "/x")),
                        VolumeMounts.Where.ANYWHERE))
                .containsExactly("config.volumeMounts: 100000 mounts; at most 32 are allowed");
        assertThat(problems(
                        List.of("x", Map.of("volume", "A b", "destination", "/" + "d".repeat(2000), "mode", 1)),
                        VolumeMounts.Where.ANYWHERE))
                .hasSize(4)
                .allSatisfy(p -> assertThat(p).hasSizeLessThan(400));
        assertThat(problems(List.of(Map.of("destination", "/d\n")), VolumeMounts.Where.ANYWHERE))
                .containsExactly(
                        "config.volumeMounts[0].volume: is required",
                        "config.volumeMounts[0].destination: \"/d\\u000a\" holds a control character");
    }
}
