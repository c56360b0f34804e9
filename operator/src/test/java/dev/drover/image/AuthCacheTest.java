package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AuthCacheTest {

    private static final class Hands implements InstantSource {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void aHeaderServesOnlyTheCredentialsThatWonIt() {
        Hands clock = new Hands();
        AuthCache cache = new AuthCache(clock);
        Optional<RegistryCredentials> a = Optional.of(new RegistryCredentials("a", "pa"));
        cache.put(AuthCache.Key.of("r.io", "team/app", a), "Bearer a", clock.now.plusSeconds(60));
        assertThat(cache.get(AuthCache.Key.of("r.io", "team/app", a))).isEqualTo("Bearer a");
        assertThat(cache.get(AuthCache.Key.of("r.io", "team/app", Optional.empty())))
                .isNull();
        assertThat(cache.get(AuthCache.Key.of("r.io", "team/app", Optional.of(new RegistryCredentials("a", "x")))))
                .isNull();
        assertThat(cache.get(AuthCache.Key.of("r.io", "team/other", a))).isNull();
        clock.now = clock.now.plusSeconds(60);
        assertThat(cache.get(AuthCache.Key.of("r.io", "team/app", a)))
                .as("expired")
                .isNull();
    }

    @Test
    void theCacheKeepsAtMostItsBoundLeastRecentlyUsedGoingFirst() {
        Hands clock = new Hands();
        AuthCache cache = new AuthCache(clock);
        AuthCache.Key first = AuthCache.Key.of("r.io", "repo-0", Optional.empty());
        for (int i = 0; i < AuthCache.MAX_ENTRIES * 3; i++) {
            cache.put(AuthCache.Key.of("r.io", "repo-" + i, Optional.empty()), "h" + i, clock.now.plusSeconds(60));
            cache.get(first); // kept in use
        }
        assertThat(cache.size()).isEqualTo(AuthCache.MAX_ENTRIES);
        assertThat(cache.get(first)).isEqualTo("h0");
        assertThat(cache.get(AuthCache.Key.of("r.io", "repo-1", Optional.empty())))
                .isNull();
    }
}
