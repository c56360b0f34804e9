package dev.drover.fs;

import dev.drover.common.UserText;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarUtils;

/**
 * A tar stream from outside the agent (a peer's snapshot, an image layer), read
 * by Commons Compress under Drover's bounds. Commons Compress bounds a PAX
 * record only by the size its header declares, reads a run of extended headers
 * by recursion, and keeps every global PAX record; so the bytes are counted
 * beneath it:
 * <ul>
 * <li>every byte read counts against a budget: the content allowed plus
 * {@link #FRAMING} per entry for tar's own headers and padding (headers, long
 * names and the entries of tasks that are not taken count too);</li>
 * <li>what is read to find one entry (its headers, PAX and GNU long-name
 * records, sparse maps, and the padding before them) is at most
 * {@link #MAX_HEADER_BYTES}, which bounds both the count and the size of
 * header records held in memory;</li>
 * <li>a global PAX header is refused (its records would apply to every later
 * entry; neither snapshots nor image layers need one);</li>
 * <li>each header's checksum is checked, and an end without tar's end-of-archive
 * block is a cut stream, not an end.</li>
 * </ul>
 * Every refusal is an {@link ArchiveException} naming the stream as its caller
 * does ("the snapshot", "layer sha256:…").
 */
public final class BoundedTarInput {

    /** What a header record, padding and a short PAX record take, allowed per entry on top of the disk size. */
    public static final long FRAMING = 2048;
    /** Bytes read to find one entry: its header records, PAX or long-name data, and the padding before them. */
    public static final int MAX_HEADER_BYTES = 64 * 1024;

    private static final int RECORD = 512;

    private final Counted counted;
    private final Tar tar;
    private final String name;
    private String last = null;

    /**
     * @param maxBytes what the entries may hold in all
     * @param name     the stream as messages name it ("the snapshot")
     * @param budget   what {@code maxBytes} is, for the message when it is passed ("the ephemeral disk's 300 MB")
     */
    public BoundedTarInput(InputStream in, long maxBytes, String name, String budget) {
        this.name = name;
        this.counted = new Counted(in, saturatedAdd(maxBytes, 2 * FRAMING), name, budget);
        this.tar = new Tar(counted, name);
    }

    /**
     * The next entry, or empty at the end of the archive. Whatever is left of the current entry's content is read
     * (and counted) first. Throws when the stream is not tar, is cut short, or breaks a bound.
     */
    public TarArchiveEntry next() throws IOException {
        drain();
        TarArchiveEntry e;
        try {
            e = tar.getNextEntry();
        } catch (ArchiveException refused) {
            throw refused;
        } catch (IOException | RuntimeException broken) {
            if (counted.ended) {
                throw new ArchiveException(name + " ends in the middle of a header (" + after() + ")");
            }
            throw new ArchiveException(
                    name + " is not a tar stream, or is corrupt (" + after() + "): " + broken.getMessage());
        }
        if (e == null) {
            if (!tar.sawEnd) {
                throw new ArchiveException(name + " ends without its end-of-archive blocks (cut short?)");
            }
            return null;
        }
        counted.allow(FRAMING);
        last = e.getName();
        return e;
    }

    /** The current entry's content. */
    public InputStream content() {
        return tar;
    }

    /** Where in the stream a problem lies, for messages about what has no name yet. */
    public String after() {
        return last == null ? "at its first entry" : "after entry " + UserText.quote(last);
    }

    private void drain() throws IOException {
        if (tar.getCurrentEntry() == null) {
            return;
        }
        byte[] skip = new byte[64 * 1024];
        try {
            while (tar.read(skip, 0, skip.length) >= 0) {
                // counted beneath
            }
        } catch (ArchiveException refused) {
            throw refused;
        } catch (IOException cut) {
            throw new ArchiveException(name + " ends in the middle of " + UserText.quote(last));
        }
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return sum < a ? Long.MAX_VALUE : sum;
    }

    /** Counts every byte from the peer against the budget, and those read to find one entry against their own. */
    private static final class Counted extends FilterInputStream {
        private final String name;
        private final String budget;
        private long limit;
        private long read;
        private long headerStart = -1;
        private boolean ended;

        Counted(InputStream in, long limit, String name, String budget) {
            super(in);
            this.limit = limit;
            this.name = name;
            this.budget = budget;
        }

        void allow(long more) {
            limit = saturatedAdd(limit, more);
        }

        void headersBegin() {
            headerStart = read;
        }

        void headersEnd() {
            headerStart = -1;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                count(n);
            } else if (n < 0) {
                ended = true;
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            count(skipped);
            return skipped;
        }

        private void count(long n) throws ArchiveException {
            read += n;
            if (read > limit) {
                throw new ArchiveException(name + " is larger than " + budget + " allow (every byte of the stream"
                        + " counts: headers, padding and entries that are not taken too)");
            }
            if (headerStart >= 0 && read - headerStart > MAX_HEADER_BYTES + RECORD) {
                throw new ArchiveException("the headers of one entry take more than " + MAX_HEADER_BYTES / 1024
                        + " KiB (a flood of PAX or long-name records?)");
            }
        }
    }

    /** Commons Compress's reader, told where an entry's headers begin and end, and checking what it does not. */
    private static final class Tar extends TarArchiveInputStream {
        private final Counted counted;
        private final String name;
        private int depth;
        private boolean sawEnd;

        Tar(Counted counted, String name) {
            super(counted, RECORD, RECORD, StandardCharsets.UTF_8.name(), false);
            this.counted = counted;
            this.name = name;
        }

        /** Commons Compress calls this again for each header in a run of extended headers: only the outer one counts. */
        @Override
        public TarArchiveEntry getNextEntry() throws IOException {
            if (depth++ == 0) {
                counted.headersBegin();
            }
            try {
                return super.getNextEntry();
            } finally {
                if (--depth == 0) {
                    counted.headersEnd();
                }
            }
        }

        /** Called on every header record: the place to check its checksum, and to tell an end from a cut. */
        @Override
        protected boolean isEOFRecord(byte[] record) {
            boolean end = super.isEOFRecord(record);
            if (end && record != null) {
                sawEnd = true;
            } else if (record != null && !TarUtils.verifyCheckSum(record)) {
                throw new IllegalStateException("bad header checksum");
            }
            return end;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            TarArchiveEntry current = getCurrentEntry();
            if (current != null && current.isGlobalPaxHeader()) {
                throw new ArchiveException(name + " holds a global PAX header, which Drover refuses (its records"
                        + " would apply to every later entry)");
            }
            return super.read(b, off, len);
        }
    }
}
