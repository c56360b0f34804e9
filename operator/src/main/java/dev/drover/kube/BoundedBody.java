package dev.drover.kube;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * A response body read whole but only up to a bound: an answer that says it is longer ({@code Content-Length}) is
 * refused before a byte is read, and one that grows past the bound while it streams is cut off there (the exchange
 * cancelled), so a hostile or broken server cannot make the agent hold more than the bound.
 */
final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {

    /** The body was longer than the bound. */
    static final class TooLarge extends IOException {
        TooLarge(long limit) {
            super("the answer is larger than " + limit + " bytes");
        }
    }

    private final long limit;
    private final CompletableFuture<byte[]> body = new CompletableFuture<>();
    private final List<byte[]> parts = new ArrayList<>();
    private long size;
    private Flow.Subscription subscription;

    private BoundedBody(long limit) {
        this.limit = limit;
    }

    /** Bodies of at most {@code limit} bytes. */
    static HttpResponse.BodyHandler<byte[]> handler(long limit) {
        return info -> {
            BoundedBody subscriber = new BoundedBody(limit);
            if (info.headers().firstValueAsLong("content-length").orElse(0) > limit) {
                subscriber.size = Long.MAX_VALUE; // refused as soon as it is subscribed, before reading
            }
            return subscriber;
        };
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return body;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (size > limit) {
            refuse();
        } else {
            s.request(1);
        }
    }

    @Override
    public void onNext(List<ByteBuffer> buffers) {
        if (body.isDone()) {
            return;
        }
        for (ByteBuffer buffer : buffers) {
            size += buffer.remaining();
            if (size > limit) {
                refuse();
                return;
            }
            byte[] part = new byte[buffer.remaining()];
            buffer.get(part);
            parts.add(part);
        }
        subscription.request(1);
    }

    private void refuse() {
        parts.clear();
        subscription.cancel();
        body.completeExceptionally(new TooLarge(limit));
    }

    @Override
    public void onError(Throwable error) {
        parts.clear();
        body.completeExceptionally(error);
    }

    @Override
    public void onComplete() {
        if (body.isDone()) {
            return;
        }
        byte[] all = new byte[(int) size];
        int at = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, all, at, part.length);
            at += part.length;
        }
        parts.clear();
        body.complete(all);
    }
}
