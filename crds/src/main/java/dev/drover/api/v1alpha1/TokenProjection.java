package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.time.Duration;
import java.util.Objects;

/**
 * The task's ServiceAccount token ({@code secrets/token}), as a Pod's projected {@code serviceAccountToken}: for
 * {@code audience} (the API server's own when not given), {@code expirationSeconds} long (1 h when not given).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.audience) || self.audience != 'drover.dev/agent'",
        message = "drover.dev/agent is the audience of Drover's agents; a task's token may not be for it")
public class TokenProjection {

    public static final long DEFAULT_EXPIRATION_SECONDS = 3600;
    public static final long MIN_EXPIRATION_SECONDS = 600;
    public static final long MAX_EXPIRATION_SECONDS = 86_400;

    /** Tokens for this audience are what agents accept from each other: never a task's. */
    public static final String AGENT_AUDIENCE = "drover.dev/agent";

    @Size(min = 1, max = 253)
    @JsonPropertyDescription("Who the token is for; the API server's audience when not given (never drover.dev/agent).")
    private String audience;

    @Min(MIN_EXPIRATION_SECONDS)
    @Max(MAX_EXPIRATION_SECONDS)
    @JsonPropertyDescription("The token's life in seconds, 600 to 86400; 3600 when not given.")
    private Long expirationSeconds;

    public TokenProjection() {}

    public TokenProjection(String audience, Long expirationSeconds) {
        this.audience = audience;
        this.expirationSeconds = expirationSeconds;
    }

    public String getAudience() {
        return audience;
    }

    public void setAudience(String audience) {
        this.audience = audience;
    }

    public Long getExpirationSeconds() {
        return expirationSeconds;
    }

    public void setExpirationSeconds(Long expirationSeconds) {
        this.expirationSeconds = expirationSeconds;
    }

    /** The life asked for, 1 h when not given. */
    @JsonIgnore
    public static Duration effectiveLife(TokenProjection p) {
        return Duration.ofSeconds(
                p == null || p.expirationSeconds == null ? DEFAULT_EXPIRATION_SECONDS : p.expirationSeconds);
    }

    /** The audience asked for, null (the API server's) when not given. */
    @JsonIgnore
    public static String effectiveAudience(TokenProjection p) {
        return p == null ? null : p.audience;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TokenProjection t
                && Objects.equals(audience, t.audience)
                && Objects.equals(expirationSeconds, t.expirationSeconds);
    }

    @Override
    public int hashCode() {
        return Objects.hash(audience, expirationSeconds);
    }
}
