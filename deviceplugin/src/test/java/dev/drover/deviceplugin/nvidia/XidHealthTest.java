package dev.drover.deviceplugin.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class XidHealthTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private final XidHealth health = new XidHealth(XidHealth.APPLICATION_XIDS, Duration.ofMinutes(5));

    @Test
    void criticalXidIsUnhealthyForTheQuietPeriod() {
        assertThat(health.recordXid("GPU-a", 79, T0)).isTrue();
        assertThat(health.healthAt("GPU-a", T0.plusSeconds(299)).healthy()).isFalse();
        assertThat(health.healthAt("GPU-a", T0.plusSeconds(299)).description())
                .isEqualTo("XID 79 at 2026-01-01T00:00:00Z; healthy again after PT5M without critical errors");
        assertThat(health.healthAt("GPU-a", T0.plusSeconds(300))).isEqualTo(XidHealth.Health.OK);
        assertThat(health.healthAt("GPU-b", T0).healthy()).isTrue();
    }

    @Test
    void anotherCriticalErrorRestartsTheQuietPeriod() {
        health.recordXid("GPU-a", 79, T0);
        health.recordXid("GPU-a", 48, T0.plusSeconds(240));
        assertThat(health.healthAt("GPU-a", T0.plusSeconds(400)).description()).startsWith("XID 48 at");
        assertThat(health.nextRecovery(T0.plusSeconds(400))).hasValue(T0.plusSeconds(540));
    }

    @Test
    void applicationXidsAreNotRecorded() {
        for (int xid : new int[] {13, 31, 43, 45, 68, 109}) {
            assertThat(health.recordXid("GPU-a", xid, T0)).isFalse();
        }
        assertThat(health.healthAt("GPU-a", T0).healthy()).isTrue();
        assertThat(health.nextRecovery(T0)).isEqualTo(Optional.empty());
    }

    @Test
    void unknownXidCountsAsCritical() {
        health.recordXid("GPU-a", 999, T0);
        assertThat(health.healthAt("GPU-a", T0).description()).startsWith("XID 999 (unknown error)");
    }

    @Test
    void doubleBitEccIsCritical() {
        health.recordDoubleBitEcc("GPU-a", T0);
        assertThat(health.healthAt("GPU-a", T0.plusSeconds(1)).description()).startsWith("double-bit ECC error at");
    }

    @Test
    void nextRecoveryIsTheEarliestGpuToRecover() {
        health.recordXid("GPU-a", 79, T0.plusSeconds(60));
        health.recordXid("GPU-b", 79, T0);
        assertThat(health.nextRecovery(T0.plusSeconds(10))).hasValue(T0.plusSeconds(300));
        assertThat(health.nextRecovery(T0.plusSeconds(300))).hasValue(T0.plusSeconds(360));
        assertThat(health.nextRecovery(T0.plusSeconds(360))).isEmpty();
    }
}
