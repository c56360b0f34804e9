package dev.drover.ratelimit;

/**
 * A token bucket: {@code burst} tokens, refilled at {@code perSecond} a second. Time is given in nanoseconds by
 * the caller (any origin, as long as it only grows), so tests control it. Not thread-safe: its owner guards it.
 */
public final class TokenBucket {

    private static final double NANOS = 1e9;
    private final double perSecond;
    private final double burst;
    private double tokens;
    private long last;

    public TokenBucket(double perSecond, double burst, long nowNanos) {
        if (!(perSecond > 0) || Double.isInfinite(perSecond) || !(burst >= 1)) {
            throw new IllegalArgumentException("a token bucket needs a positive rate and a burst of at least 1");
        }
        this.perSecond = perSecond;
        this.burst = burst;
        this.tokens = burst;
        this.last = nowNanos;
    }

    /** Takes a token if one is there; false (and nothing taken, nothing owed) when none is. */
    public boolean tryTake(long nowNanos) {
        refill(nowNanos);
        if (tokens < 1) {
            return false;
        }
        tokens -= 1;
        return true;
    }

    /** Takes a token, owing it if none is there; returns how long to wait before using it (0 when one was there). */
    public long take(long nowNanos) {
        refill(nowNanos);
        tokens -= 1;
        return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / perSecond * NANOS);
    }

    /** How long until a token is there (0 when one is), taking nothing. */
    public long nanosUntilToken(long nowNanos) {
        refill(nowNanos);
        return tokens >= 1 ? 0 : (long) Math.ceil((1 - tokens) / perSecond * NANOS);
    }

    private void refill(long nowNanos) {
        tokens = Math.min(burst, tokens + Math.max(0, nowNanos - last) / NANOS * perSecond);
        last = Math.max(last, nowNanos);
    }
}
