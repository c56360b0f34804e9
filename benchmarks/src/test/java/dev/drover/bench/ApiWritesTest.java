package dev.drover.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.local.LocalApiServer;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The bench's reading of the API server's write counts: the agent's writes, not its own. */
class ApiWritesTest {

    private static String series(String user, String verb, String resource, long n) {
        return "drover_local_write_requests_total{user=\"" + user + "\",verb=\"" + verb + "\",resource=\"" + resource
                + "\"} " + n + "\n";
    }

    @Test
    void theBenchsOwnWritesAreLeftOutAndOtherUsersSummedByVerbAndResource() {
        String metrics = "# TYPE drover_local_write_requests_total counter\n"
                + series(LocalApiServer.ADMIN_USER, "create", "allocations", 100)
                + series(LocalApiServer.ADMIN_USER, "delete", "allocations", 100)
                + series("system:serviceaccount:drover-system:drover", "patch", "allocations/status", 150)
                + series("system:serviceaccount:drover-system:drover", "create", "events", 40)
                + series("a \\\"quoted\\\" user", "patch", "allocations/status", 2);
        assertThat(ApiWrites.parse(metrics))
                .containsExactlyInAnyOrderEntriesOf(Map.of("patch allocations/status", 152L, "create events", 40L));
    }

    @Test
    void aPhaseIsTheDifferenceAndTheLifeIsTheSumOfItsPhasesPerAllocation() {
        Map<String, Long> start = Map.of("patch nodes/status", 3L);
        Map<String, Long> running = Map.of("patch nodes/status", 3L, "patch allocations/status", 20L);
        Map<String, Long> toRunning = ApiWrites.between(start, running);
        assertThat(toRunning).containsExactlyInAnyOrderEntriesOf(Map.of("patch allocations/status", 20L));

        Map<String, Long> deleteBegin = Map.of("patch allocations/status", 25L, "create events", 1L);
        Map<String, Long> gone = Map.of("patch allocations/status", 25L, "create events", 1L, "patch allocations", 10L);
        Map<String, Long> life = ApiWrites.plus(toRunning, ApiWrites.between(deleteBegin, gone));
        assertThat(life)
                .containsExactlyInAnyOrderEntriesOf(Map.of("patch allocations/status", 20L, "patch allocations", 10L));

        ObjectNode result = new ObjectMapper().createObjectNode();
        ApiWrites.put(result, life, 8);
        assertThat(result.get("apiWritesPerAllocation").asDouble()).isEqualTo(3.75);
        assertThat(result.get("apiWrites").get("patch allocations").asLong()).isEqualTo(10);
        assertThat(result.get("apiWrites").size()).isEqualTo(2);
    }
}
