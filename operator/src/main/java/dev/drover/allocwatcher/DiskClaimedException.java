package dev.drover.allocwatcher;

import java.io.IOException;

/** The disk of a previous allocation was claimed by another successor first: it is carried to that one only. */
public final class DiskClaimedException extends IOException {

    private final String holder;

    public DiskClaimedException(String previous, String holder) {
        super("allocation " + holder + " claimed the disk of " + previous
                + " first, and a disk goes to one successor only");
        this.holder = holder;
    }

    private DiskClaimedException(String message) {
        super(message);
        this.holder = null;
    }

    /**
     * The agent of {@code node}, which has the disk, refused the claim because another successor holds it;
     * {@code said}: its answer, already cut and escaped for a message.
     */
    public static DiskClaimedException onNode(String node, String said) {
        return new DiskClaimedException("the agent of node " + node + " says " + said);
    }

    /** The name of the allocation that holds the claim; null when another node's agent said so. */
    public String holder() {
        return holder;
    }
}
