package dev.drover.taskrunner.identity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.credentials.CredentialException;
import dev.drover.credentials.Credentials;
import dev.drover.credentials.ObjectRef;
import dev.drover.credentials.ServiceAccountToken;
import dev.drover.credentials.TypedSecret;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TokenCacheTest {

    static final Instant T = Instant.parse("2026-11-25T12:00:00Z");

    @Test
    void aTokenIsRenewedAtFourFifthsOfTheLifeItGot() {
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofHours(1)))).isEqualTo(T.plus(Duration.ofMinutes(48)));
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofMinutes(10)))).isEqualTo(T.plus(Duration.ofMinutes(8)));
    }

    @Test
    void clocksThatDisagreeNeverMakeEveryUseMintAToken() {
        assertThat(TokenCache.renewAt(T, T.minus(Duration.ofMinutes(5))))
                .as("already expired by this clock")
                .isEqualTo(T.plus(Duration.ofSeconds(10)));
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofMillis(20))))
                .as("a life of a few milliseconds")
                .isEqualTo(T.plus(Duration.ofSeconds(1)));
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofSeconds(12))))
                .as("80 % of a short life, past half of it")
                .isEqualTo(T.plus(Duration.ofMillis(9600)));
    }

    /** A clock tests move by hand. */
    static final class Hands extends Clock {
        Instant now = T;

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }

    @Test
    void aRefusalIsRememberedForAWhileSoATaskStormCostsOneRequest() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        Hands clock = new Hands();
        boolean[] refuse = {true};
        Credentials api = new Credentials() {
            @Override
            public ServiceAccountToken token(String ns, String sa, String audience, long seconds)
                    throws CredentialException {
                asked.incrementAndGet();
                if (refuse[0]) {
                    throw new CredentialException(CredentialException.Reason.FORBIDDEN, "label namespace " + ns);
                }
                return new ServiceAccountToken("t", clock.now.plus(Duration.ofHours(1)));
            }

            @Override
            public Map<String, byte[]> read(ObjectRef ref, String token) {
                throw new UnsupportedOperationException();
            }

            @Override
            public TypedSecret secret(String namespace, String name, String token) {
                throw new UnsupportedOperationException();
            }
        };
        TokenCache cache = new TokenCache(api, clock);
        TokenCache.Key key = new TokenCache.Key("legacy", "default", null, 3600);
        for (int i = 0; i < 1000; i++) {
            assertThatThrownBy(() -> cache.get(key)).hasMessage("label namespace legacy");
        }
        assertThat(asked.get()).isEqualTo(1);

        refuse[0] = false; // the namespace was labelled: seen once the refusal is forgotten
        clock.now = clock.now.plus(TokenCache.REFUSAL_MEMORY).plusSeconds(1);
        assertThat(cache.get(key).token()).isEqualTo("t");
        assertThat(asked.get()).isEqualTo(2);
    }
}
