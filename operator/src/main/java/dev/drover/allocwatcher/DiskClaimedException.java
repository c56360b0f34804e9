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

    /** The name of the allocation that holds the claim. */
    public String holder() {
        return holder;
    }
}
