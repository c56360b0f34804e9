package dev.drover.web;

import dev.drover.execstream.ExecSession;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Joins two message-level WebSockets, a hop of an exec (user to gateway to agent): each message goes on to the other
 * side as it came, in order, and the next is read from its side only once it is written, so the slower side holds the
 * faster one back and no hop buffers more than one message per direction. A side that closes closes the other (with
 * its reason when it broke). The user's side may open after the agent's (its upgrade is accepted only once the agent
 * accepted): what the agent sends first waits for it.
 */
public final class Relay {

    private static final Logger LOG = LoggerFactory.getLogger(Relay.class);
    private static final Executor SENDERS =
            command -> Thread.ofVirtual().name("relay").start(command);

    private final Half toUser = new Half("user");
    private final Half toAgent = new Half("agent");

    /**
     * Closes the dialled side unless the dialling side opens within {@code within}: a caller whose upgrade failed
     * after the hop dialled on (it hung up first) would otherwise leave the far side's session, and its command,
     * running until its idle limit. {@code neverOpened} runs then, after the close is asked for, so the caller frees
     * what it holds for the session (its user side's close, which would otherwise, never comes).
     */
    public void expectUser(java.time.Duration within, Runnable neverOpened) {
        Thread.ofVirtual().name("relay-open").start(() -> {
            try {
                toUser.peer.get(within.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                LOG.debug("the caller's side did not open within {}: closing the other", within);
                toUser.closed = true;
                toUser.peer.completeExceptionally(new IOException("the caller's side never opened"));
                toAgent.close("the caller's upgrade did not complete");
                neverOpened.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** The receiver of the side a hop dialled (the agent's, or the next hop's). */
    public MessageReceiver fromAgent() {
        return new Side(toAgent, toUser);
    }

    /** The receiver of the side that dialled the hop (the user's, or the previous hop's). */
    public MessageReceiver fromUser() {
        return new Side(toUser, toAgent);
    }

    /** One direction: where messages go, and the chain that keeps them in order. */
    private static final class Half {
        private final String name;
        private final CompletableFuture<ExecSession.Peer> peer = new CompletableFuture<>();
        private CompletableFuture<?> tail;
        private volatile boolean closed;

        Half(String name) {
            this.name = name;
            this.tail = peer;
        }

        synchronized void then(Runnable step) {
            tail = tail.thenRunAsync(step, SENDERS).exceptionally(t -> {
                LOG.debug("relay to the {} side: {}", name, t.toString());
                return null;
            });
        }

        void forward(ByteBuffer message, Runnable done, Half back) {
            then(() -> {
                try {
                    if (!closed) {
                        peer.join().send(message);
                    }
                } catch (IOException e) {
                    LOG.debug("the {} side is gone: {}", name, e.toString());
                    close("the " + name + " side is gone");
                    back.close("the " + name + " side is gone");
                } finally {
                    done.run();
                }
            });
        }

        void close(String error) {
            then(() -> {
                synchronized (this) {
                    if (closed) {
                        return;
                    }
                    closed = true;
                }
                peer.join().close(error);
            });
        }
    }

    /** A side's receiver: it opens its own half and forwards to the other. */
    private static final class Side implements MessageReceiver {
        private final Half own;
        private final Half other;

        Side(Half own, Half other) {
            this.own = own;
            this.other = other;
        }

        @Override
        public void opened(ExecSession.Peer peer) {
            own.peer.complete(peer);
        }

        @Override
        public void message(ByteBuffer message, Runnable done) {
            other.forward(message, done, own);
        }

        @Override
        public void closed(String why) {
            // a normal close (1000) is passed on as one; anything else says what broke
            other.close(why != null && why.startsWith("1000") ? null : why);
            own.closed = true;
        }
    }
}
