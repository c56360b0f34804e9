package dev.drover.local;

import dev.drover.web.Exchange;
import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs a handler on threads of {@code threads}, whose stacks are {@link NestingDepth#STACK_BYTES}: copying,
 * comparing, validating and writing an object recurse once or more a level, up to {@link NestingDepth#MAX} levels
 * (as kube-apiserver, whose Go stacks grow, takes them), past what the server's virtual threads hold. The calling
 * (virtual) thread waits.
 */
final class DeepStacks implements Exchange.Handler {

    private final Exchange.Handler handler;
    private final ExecutorService threads;

    DeepStacks(Exchange.Handler handler, ExecutorService threads) {
        this.handler = handler;
        this.threads = threads;
    }

    @Override
    public void handle(Exchange exchange) throws IOException {
        Future<?> handled;
        try {
            handled = threads.submit(() -> {
                handler.handle(exchange);
                return null;
            });
        } catch (RejectedExecutionException closing) {
            handler.handle(exchange); // the server is closing: answered here, as before
            return;
        }
        try {
            handled.get();
        } catch (InterruptedException e) {
            handled.cancel(true);
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case IOException io -> throw io;
                case RuntimeException r -> throw r;
                case Error error -> throw error;
                default -> throw new IOException(e.getCause());
            }
        }
    }
}
