package dev.drover.taskrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import org.junit.jupiter.api.Test;

class StoredHandlesTest {

    @Test
    void aStoredStartTimeIsReadAsInstantParseReadsIt() {
        for (String s : List.of(
                "2026-12-07T12:23:15Z",
                "2026-12-07T12:23:15.431Z",
                "2026-12-07T12:23:15.431123Z",
                "2026-12-07T12:23:15.431123456Z",
                "2026-12-07T12:23:15.4Z",
                "1970-01-01T00:00:00Z",
                "2024-02-29T23:59:59.999999999Z",
                "2026-12-31T23:59:60Z",
                "2026-12-07T24:00:00Z",
                "+10000-01-01T00:00:00Z",
                "0001-01-01T00:00:00.000000001Z")) {
            assertThat(StoredHandles.instant(s)).as(s).isEqualTo(Instant.parse(s));
        }
        Instant now = Instant.now();
        assertThat(StoredHandles.instant(now.toString())).isEqualTo(now);
    }

    @Test
    void aStartTimeThatIsNoInstantIsRefusedAsInstantParseRefusesIt() {
        for (String s : List.of(
                "2026-13-07T12:23:15Z",
                "2026-12-07T25:00:00Z",
                "2026-12-07T12:23:15.12x4Z",
                "2026-12-07 12:23:15Z",
                "")) {
            assertThatThrownBy(() -> StoredHandles.instant(s)).as(s).isInstanceOf(DateTimeParseException.class);
        }
    }
}
