package dev.drover.local;

import java.util.ArrayList;
import java.util.Collection;

/**
 * Problems found in a request body: the first {@link #SHOWN} kept, the rest only counted. A hostile body can hold
 * hundreds of thousands of bad items; each would otherwise become a line of one 422 message tens of MB long.
 */
final class Problems extends ArrayList<String> {

    /** Problems a message names before it says how many more there were. */
    static final int SHOWN = 100;

    private int more;

    Problems() {}

    Problems(Collection<String> problems) {
        addAll(problems);
    }

    @Override
    public boolean add(String problem) {
        if (size() >= SHOWN) {
            more++;
            return false;
        }
        return super.add(problem);
    }

    @Override
    public boolean addAll(Collection<? extends String> problems) {
        boolean added = false;
        for (String p : problems) {
            added |= add(p);
        }
        return added;
    }

    /** How many problems were found past the first {@link #SHOWN}. */
    int more() {
        return more;
    }

    /** The problems kept, joined by {@code separator}, then {@code ... and N more} if some were only counted. */
    String joined(String separator) {
        return String.join(separator, this) + (more == 0 ? "" : separator + "... and " + more + " more");
    }
}
