package dev.drover.execstream;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.web.ClientSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A {@link ClientSocket} against an agent's exec endpoint ({@link FakeExecAgent}). */
class ClientSocketTest {

    @TempDir
    Path dir;

    FakeExecAgent agent;

    @BeforeEach
    void start() throws Exception {
        agent = new FakeExecAgent(dir);
    }

    @AfterEach
    void stop() {
        agent.close();
    }

    @Test
    void twoThreadsSendingAtOnceTakeTurnsAndNothingIsLost() throws Exception {
        ExecTranscript cat = new ExecTranscript();
        ClientSocket socket = agent.open(
                "/v1/allocations/team-a/one/exec?task=web&command=cat&stdin=true", "alice", Channels.PROTOCOLS, cat);
        int each = 2000;
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        // as kubectl drover exec -it: its input and its terminal's size go out from threads of their own
        List<Thread> senders = List.of("a", "b").stream()
                .map(letter -> Thread.ofPlatform().start(() -> {
                    try {
                        for (int i = 0; i < each; i++) {
                            socket.send(ExecTranscript.stdin(letter));
                        }
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }))
                .toList();
        for (Thread t : senders) {
            t.join(30_000);
        }
        assertThat(failures).isEmpty();
        socket.send(Channels.close(Channels.STDIN));
        String out = cat.channel(Channels.STDOUT);
        assertThat(out.chars().filter(c -> c == 'a').count()).isEqualTo(each);
        assertThat(out.chars().filter(c -> c == 'b').count()).isEqualTo(each);
    }
}
