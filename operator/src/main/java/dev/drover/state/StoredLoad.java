package dev.drover.state;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The store read for restore ({@link StateDB#loadAll}) on a thread of its own, begun as soon as the store is open: an
 * agent's start spends seconds meanwhile on its Kubernetes client, its first requests and its servers, mostly waiting,
 * so by the time the runners are rebuilt the store has been read and decoded.
 */
public final class StoredLoad {

    private final CompletableFuture<List<StoredAllocation>> loaded = new CompletableFuture<>();

    private StoredLoad() {}

    /** Begins reading everything {@code db} holds, now. */
    public static StoredLoad begin(StateDB db) {
        StoredLoad load = new StoredLoad();
        Thread.ofPlatform().name("state-load").daemon().start(() -> {
            try {
                load.loaded.complete(db.loadAll());
            } catch (RuntimeException | Error e) {
                load.loaded.completeExceptionally(e);
            }
        });
        return load;
    }

    /** What {@code db} holds, read on the calling thread now. */
    public static StoredLoad now(StateDB db) {
        StoredLoad load = new StoredLoad();
        load.loaded.complete(db.loadAll());
        return load;
    }

    /** Waits until the store was read; what it could not read throws here, as {@link StateDB#loadAll} would. */
    public List<StoredAllocation> await() {
        try {
            return loaded.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }
}
