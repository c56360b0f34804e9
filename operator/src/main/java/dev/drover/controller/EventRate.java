package dev.drover.controller;

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

    /** The bucket itself; one writer thread uses it. */
    static final class Bucket {
        private final EventRate rate;
        private double tokens;
        private long last;

        Bucket(EventRate rate, long nowNanos) {
            this.rate = rate;
            this.tokens = rate.burst();
            this.last = nowNanos;
        }

        /** Takes a token if one is there; false (and nothing taken) when none is. */
        boolean tryTake(long nowNanos) {
            tokens = Math.min(rate.burst(), tokens + (nowNanos - last) / 1e9 * rate.qps());
            last = nowNanos;
            if (tokens < 1) {
                return false;
            }
            tokens -= 1;
            return true;
        }

        /** Takes a token; returns how long to wait before using it (0 when one was there). */
        long take(long nowNanos) {
            tokens = Math.min(rate.burst(), tokens + (nowNanos - last) / 1e9 * rate.qps());
            last = nowNanos;
            tokens -= 1;
            return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / rate.qps() * 1e9);
        }
    }
}
