package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.execstream.ExecSession;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RelayTest {

    /** The agent's side, as the relay sees it: what it was asked to close with. */
    static final class Peer implements ExecSession.Peer {
        final List<String> closes = new CopyOnWriteArrayList<>();
        final CountDownLatch closed = new CountDownLatch(1);

        @Override
        public void send(ByteBuffer message) {}

        @Override
        public void close(String error) {
            closes.add(String.valueOf(error));
            closed.countDown();
        }
    }

    @Test
    void aUserSideThatNeverOpensClosesTheAgentsAndTellsTheCaller() throws Exception {
        Relay relay = new Relay();
        Peer agent = new Peer();
        relay.fromAgent().opened(agent);
        CountDownLatch neverOpened = new CountDownLatch(1);
        relay.expectUser(Duration.ofMillis(200), neverOpened::countDown);
        assertThat(neverOpened.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.closed.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.closes).containsExactly("the caller's upgrade did not complete");
    }

    @Test
    void aUserSideThatOpensInTimeKeepsTheSession() throws Exception {
        Relay relay = new Relay();
        Peer agent = new Peer();
        relay.fromAgent().opened(agent);
        CountDownLatch neverOpened = new CountDownLatch(1);
        relay.expectUser(Duration.ofMillis(200), neverOpened::countDown);
        relay.fromUser().opened(new Peer());
        assertThat(neverOpened.await(1, TimeUnit.SECONDS)).isFalse();
        assertThat(agent.closes).isEmpty();
    }
}
