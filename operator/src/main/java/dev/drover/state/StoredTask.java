package dev.drover.state;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/** What the store holds for one task of a restored allocation. */
public record StoredTask(String name, Optional<TaskLocalState> localState, Optional<JsonNode> state) {
}
