package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.agent.FingerprintChanges.Change;
import dev.drover.agent.FingerprintChanges.Kind;
import dev.drover.deviceplugin.AttributeValue;
import dev.drover.deviceplugin.DeviceGroup;
import dev.drover.deviceplugin.DeviceInstance;
import dev.drover.deviceplugin.Fingerprint;
import dev.drover.deviceplugin.Unit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class FingerprintChangesTest {

    private static final DeviceInstance A = gpu("GPU-a", 0);
    private static final DeviceInstance B = gpu("GPU-b", 1);

    private static DeviceInstance gpu(String id, int index) {
        return new DeviceInstance(
                id,
                true,
                "",
                Optional.of("0000:00:0" + index + ".0"),
                Optional.of(DeviceInstance.GpuSlot.whole(index, id)));
    }

    private static Fingerprint t4(DeviceInstance... instances) {
        return Fingerprint.of(List.of(group("Tesla T4", 15360, instances)));
    }

    private static DeviceGroup group(String model, long memory, DeviceInstance... instances) {
        return new DeviceGroup(
                "nvidia", "gpu", model, Map.of("memory", AttributeValue.integer(memory, Unit.MIB)), List.of(instances));
    }

    @Test
    void sameFingerprintIsNoChange() {
        assertThat(FingerprintChanges.between(t4(A, B), t4(A, B))).isEmpty();
    }

    @Test
    void healthChangeSaysWhatItWas() {
        DeviceInstance sick = A.withHealth(false, "XID 79");
        assertThat(FingerprintChanges.between(t4(A, B), t4(sick, B)))
                .containsExactly(new Change(Kind.HEALTH, "nvidia/gpu/Tesla T4", sick, "healthy"));
        assertThat(FingerprintChanges.between(t4(sick, B), t4(A, B)))
                .containsExactly(new Change(Kind.HEALTH, "nvidia/gpu/Tesla T4", A, "unhealthy: XID 79"));
    }

    @Test
    void instancesThatComeAndGoAreAddedAndRemoved() {
        assertThat(FingerprintChanges.between(t4(A), t4(A, B)))
                .containsExactly(new Change(Kind.ADDED, "nvidia/gpu/Tesla T4", B, ""));
        assertThat(FingerprintChanges.between(t4(A, B), t4(B)))
                .containsExactly(new Change(Kind.REMOVED, "nvidia/gpu/Tesla T4", A, ""));
    }

    @Test
    void anInstanceInAnotherGroupOrPlaceIsChanged() {
        Fingerprint moved = Fingerprint.of(List.of(group("Tesla T4", 15360, A), group("Tesla T4 16G", 16384, B)));
        assertThat(FingerprintChanges.between(t4(A, B), moved))
                .containsExactly(new Change(Kind.CHANGED, "nvidia/gpu/Tesla T4 16G", B, "was in nvidia/gpu/Tesla T4"));
        Fingerprint bigger = Fingerprint.of(List.of(group("Tesla T4", 16384, A, B)));
        assertThat(FingerprintChanges.between(t4(A, B), bigger))
                .extracting(Change::kind)
                .containsExactly(Kind.CHANGED, Kind.CHANGED);
        DeviceInstance elsewhere = new DeviceInstance("GPU-a", true, "", Optional.empty(), A.gpu());
        assertThat(FingerprintChanges.between(t4(A), t4(elsewhere)))
                .extracting(Change::kind)
                .containsExactly(Kind.CHANGED);
    }

    @Test
    void losingAndFindingTheDevicesIsAvailability() {
        Fingerprint gone = Fingerprint.unavailable("no NVIDIA GPUs: driver not loaded");
        assertThat(FingerprintChanges.between(t4(A), gone))
                .containsExactly(
                        new Change(Kind.AVAILABILITY, "", null, "no NVIDIA GPUs: driver not loaded"),
                        new Change(Kind.REMOVED, "nvidia/gpu/Tesla T4", A, ""));
        assertThat(FingerprintChanges.between(gone, t4(A)))
                .containsExactly(
                        new Change(Kind.AVAILABILITY, "", null, ""),
                        new Change(Kind.ADDED, "nvidia/gpu/Tesla T4", A, ""));
    }
}
