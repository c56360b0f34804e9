package dev.drover.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class FingerprintValidatorTest {

    private static DeviceGroup group(String vendor, String type, String model, String... ids) {
        return new DeviceGroup(
                vendor,
                type,
                model,
                Map.of(),
                java.util.Arrays.stream(ids).map(DeviceInstance::healthy).toList());
    }

    @Test
    void wellFormedFingerprintPasses() throws Exception {
        Fingerprint fp = Fingerprint.of(
                List.of(group("nvidia", "gpu", "Tesla T4", "GPU-a", "GPU-b"), group("nvidia", "gpu", "A100", "GPU-c")));
        assertThat(FingerprintValidator.problems(fp)).isEmpty();
        assertThat(FingerprintValidator.validate("fake", fp)).isSameAs(fp);
    }

    @Test
    void emptyVendorTypeOrModelIsNamedWithItsGroup() {
        Fingerprint fp = Fingerprint.of(List.of(group("nvidia", "gpu", "T4", "GPU-a"), group("", " ", "", "GPU-b")));
        assertThat(FingerprintValidator.problems(fp))
                .containsExactly("groups[1].vendor is empty", "groups[1].type is empty", "groups[1].model is empty");
    }

    @Test
    void emptyInstanceIdIsNamedWithItsPosition() {
        Fingerprint fp = Fingerprint.of(List.of(group("nvidia", "gpu", "T4", "GPU-a", "")));
        assertThat(FingerprintValidator.problems(fp)).containsExactly("groups[0].instances[1].id is empty");
    }

    @Test
    void duplicateIdsAcrossGroupsRejectTheWholeFingerprint() {
        Fingerprint fp = Fingerprint.of(List.of(
                group("nvidia", "gpu", "T4", "GPU-a", "GPU-b"), group("nvidia", "gpu", "A100", "GPU-b", "GPU-b")));
        assertThatThrownBy(() -> FingerprintValidator.validate("nvidia", fp))
                .isInstanceOf(InvalidFingerprintException.class)
                .hasMessageContaining("device plugin nvidia")
                .hasMessageContaining("rejected whole")
                .hasMessageContaining("instance id GPU-b appears more than once")
                .satisfies(e ->
                        assertThat(((InvalidFingerprintException) e).problems()).hasSize(1));
    }

    @Test
    void emptyFingerprintWithReasonIsValid() {
        Fingerprint fp = Fingerprint.unavailable("libnvidia-ml.so.1 not found");
        assertThat(FingerprintValidator.problems(fp)).isEmpty();
        assertThat(fp.unavailableReason()).isEqualTo(Optional.of("libnvidia-ml.so.1 not found"));
    }
}
