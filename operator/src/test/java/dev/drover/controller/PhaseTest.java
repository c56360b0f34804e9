package dev.drover.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.controller.Phase.Event;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PhaseTest {

    /**
     * Every (phase, event) pair and the phase it leads to; "." keeps the phase. Columns in {@link Event}'s order:
     * CONFIRMED, ADMITTED, NOT_FITTED, SLOT, STARTED, STORE_FAILED, START_FAILED, STORE_RECOVERED, ENDED, RESUMED,
     * RELEASED.
     */
    private static final String TABLE = """
            RESTORING       RUNNING  .        .             .         .        .               .    .       .         .        RELEASED
            NEW             .        QUEUED   NOT_ADMITTED  .         .        .               .    .       .         .        RELEASED
            QUEUED          .        QUEUED   .             STARTING  .        .               .    .       .         .        RELEASED
            STARTING        .        .        .             .         RUNNING  AWAITING_STORE  NEW  .       .         .        RELEASED
            AWAITING_STORE  .        QUEUED   .             .         .        .               .    QUEUED  .         .        RELEASED
            RUNNING         .        .        .             .         .        .               .    .       TERMINAL  .        RELEASED
            TERMINAL        .        .        .             .         .        .               .    .       .         RUNNING  RELEASED
            NOT_ADMITTED    .        .        .             .         .        .               .    .       .         .        RELEASED
            RELEASED        .        .        .             .         .        .               .    .       .         .        .
            """;

    @Test
    void everyEventLeadsEachPhaseWhereTheTableSays() {
        List<String> rows = TABLE.lines().toList();
        assertThat(rows).hasSize(Phase.values().length);
        List<String> mismatches = new ArrayList<>();
        for (String row : rows) {
            String[] cells = row.trim().split("\\s+");
            Phase from = Phase.valueOf(cells[0]);
            assertThat(cells).as(from.name()).hasSize(Event.values().length + 1);
            for (Event e : Event.values()) {
                String cell = cells[e.ordinal() + 1];
                Phase expected = cell.equals(".") ? from : Phase.valueOf(cell);
                Phase actual = from.on(e);
                if (actual != expected) {
                    mismatches.add(from + " on " + e + ": " + actual + ", expected " + expected);
                }
            }
        }
        assertThat(Arrays.stream(Phase.values()).map(Enum::name))
                .containsExactlyElementsOf(
                        rows.stream().map(r -> r.trim().split("\\s+")[0]).toList());
        assertThat(mismatches).isEmpty();
    }

    @Test
    void onlyAStartedOrConfirmedAllocationRunsAndNothingComesBackFromReleased() {
        assertThat(Arrays.stream(Phase.values()).filter(Phase::runs)).containsExactly(Phase.RUNNING, Phase.TERMINAL);
        for (Event e : Event.values()) {
            assertThat(Phase.RELEASED.on(e)).isEqualTo(Phase.RELEASED);
            assertThat(Phase.NOT_ADMITTED.on(e)).isIn(Phase.NOT_ADMITTED, Phase.RELEASED);
        }
    }
}
