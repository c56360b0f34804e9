package dev.drover.controller.events;

import dev.drover.ratelimit.TokenBucket;

/**
 * How fast Kubernetes Events are written: a token bucket of {@code burst} tokens
 * refilled at {@code qps} a second, as the kubelet's {@code --event-qps} and
 * {@code --event-burst}. Task events reach status at once whatever this allows;
 * only their Event objects wait, so that a thousand allocations arriving at once
 * do not spend the agent's and the API server's CPU on Events while tasks start.
 */
public record EventRate(double qps, int burst) {

    /** The kubelet's defaults. */
    public static final EventRate DEFAULT = new EventRate(50, 100);

    public EventRate {
        if (!(qps > 0) || Double.isInfinite(qps)) {
            throw new IllegalArgumentException("events.qps: " + qps + " must be a positive number");
        }
        if (burst < 1) {
            throw new IllegalArgumentException("events.burst: " + burst + " must be at least 1");
        }
    }

    /** A bucket of this rate, full at {@code nowNanos}. */
    TokenBucket bucket(long nowNanos) {
        return new TokenBucket(qps, burst, nowNanos);
    }
}
