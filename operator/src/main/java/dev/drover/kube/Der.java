package dev.drover.kube;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/** The little DER that wrapping a private key into PKCS#8 needs: writing a few types, reading a sequence. */
final class Der {

    static final byte[] NULL = {0x05, 0x00};

    private Der() {}

    /** One element read: its tag, and its content (for a constructed one, its children's encodings). */
    record Element(int tag, byte[] content, int end) {}

    static byte[] sequence(byte[]... children) {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        for (byte[] c : children) {
            content.writeBytes(c);
        }
        return tlv(0x30, content.toByteArray());
    }

    static byte[] integer(long value) {
        return tlv(0x02, BigInteger.valueOf(value).toByteArray());
    }

    static byte[] octetString(byte[] content) {
        return tlv(0x04, content);
    }

    static byte[] oid(String dotted) {
        String[] parts = dotted.split("\\.");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(Integer.parseInt(parts[0]) * 40 + Integer.parseInt(parts[1]));
        for (int i = 2; i < parts.length; i++) {
            long v = Long.parseLong(parts[i]);
            int groups = Math.max(1, (64 - Long.numberOfLeadingZeros(v) + 6) / 7);
            for (int g = groups - 1; g >= 0; g--) {
                out.write((int) ((v >>> (7 * g)) & 0x7f) | (g > 0 ? 0x80 : 0));
            }
        }
        return tlv(0x06, out.toByteArray());
    }

    static byte[] tlv(int tag, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(content.length + 6);
        out.write(tag);
        int n = content.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(n) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write((n >>> (8 * i)) & 0xff);
            }
        }
        out.writeBytes(content);
        return out.toByteArray();
    }

    /** The element at {@code offset}; throws IllegalArgumentException on a truncated or malformed one. */
    static Element read(byte[] der, int offset) {
        if (offset + 2 > der.length) {
            throw new IllegalArgumentException("truncated DER");
        }
        int tag = der[offset] & 0xff;
        int length = der[offset + 1] & 0xff;
        int at = offset + 2;
        if (length >= 0x80) {
            int bytes = length & 0x7f;
            if (bytes == 0 || bytes > 3 || at + bytes > der.length) {
                throw new IllegalArgumentException("bad DER length");
            }
            length = 0;
            for (int i = 0; i < bytes; i++) {
                length = (length << 8) | (der[at++] & 0xff);
            }
        }
        if (at + length > der.length) {
            throw new IllegalArgumentException("truncated DER");
        }
        byte[] content = new byte[length];
        System.arraycopy(der, at, content, 0, length);
        return new Element(tag, content, at + length);
    }

    /** The elements inside a constructed element, in order; for a context tag such as {@code [0]}, its one child. */
    static List<Element> children(Element parent) {
        List<Element> children = new ArrayList<>();
        for (int at = 0; at < parent.content().length; ) {
            Element e = read(parent.content(), at);
            children.add(e);
            at = e.end();
        }
        return children;
    }
}
