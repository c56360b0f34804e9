package dev.drover.credentials;

import java.time.Instant;
import java.util.Objects;

/** A minted token and when it stops working. {@link #toString()} never shows the token. */
public record ServiceAccountToken(String token, Instant expiry) {

    public ServiceAccountToken {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(expiry, "expiry");
    }

    @Override
    public String toString() {
        return "ServiceAccountToken[expiry=" + expiry + "]";
    }
}
