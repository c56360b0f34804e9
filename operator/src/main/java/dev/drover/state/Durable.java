package dev.drover.state;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** Waiting for a write the store has queued to become durable, and what a caller is told when it does not. */
final class Durable {

    private Durable() {}

    /**
     * Returns once {@code write} is durable. A write that failed is a {@link StateStoreException} that names what it
     * held ({@code bucket/key}, or {@code key} alone when {@code bucket} is null); a closed store's refusal is
     * rethrown as it is.
     */
    static void await(CompletableFuture<Void> write, Bucket bucket, String key) {
        String what = bucket == null ? key : bucket.storedName() + "/" + key;
        try {
            write.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StateStoreException(
                    "interrupted while waiting for the write of " + what
                            + " to become durable; it may or may not have been stored",
                    e);
        } catch (ExecutionException | CancellationException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof IllegalStateException closed) {
                throw closed;
            }
            throw new StateStoreException(
                    "could not store " + what + ": " + cause.getMessage()
                            + " (kept, and written again once the store can write)",
                    cause);
        }
    }
}
