package dev.drover.network;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.drover.common.UserText;
import java.util.Locale;

/** An allocation's {@code spec.network.mode}, spelled as the API spells it. */
public enum NetworkMode {
    /** The node's own network namespace: nothing to set up. */
    HOST,
    /** A network namespace of the allocation's own with its loopback only, up. */
    NONE,
    /** A network namespace of its own on the node's bridge, its ports mapped from host ports. */
    BRIDGE;

    /** {@code host}, {@code none}, {@code bridge}. */
    @JsonValue
    public String spelling() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The mode the API's spelling names; null (unset) is {@link #HOST}, the API's default. */
    @JsonCreator
    public static NetworkMode parse(String spelling) {
        if (spelling == null) {
            return HOST;
        }
        for (NetworkMode m : values()) {
            if (m.spelling().equals(spelling)) {
                return m;
            }
        }
        throw new IllegalArgumentException(
                "spec.network.mode " + UserText.quote(spelling) + " is none of host, none, bridge");
    }
}
