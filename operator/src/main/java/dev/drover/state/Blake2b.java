package dev.drover.state;

import org.bouncycastle.crypto.digests.Blake2bDigest;

/** BLAKE2b-256, the hash deduplication compares values by (as Nomad's client state does). */
final class Blake2b {

    static final int LENGTH = 32;

    private Blake2b() {}

    static byte[] hash256(byte[] value) {
        // A digest per call: cheaper than coordinating a shared, stateful one across writer threads.
        Blake2bDigest digest = new Blake2bDigest(LENGTH * 8);
        digest.update(value, 0, value.length);
        byte[] out = new byte[LENGTH];
        digest.doFinal(out, 0);
        return out;
    }
}
