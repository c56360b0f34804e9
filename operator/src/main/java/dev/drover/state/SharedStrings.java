package dev.drover.state;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer;
import com.fasterxml.jackson.databind.deser.std.StringDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;

/**
 * Short strings read from JSON, shared. The agent holds the same few values thousands of times over ({@code default},
 * {@code SIGTERM}, {@code 5s}, {@code drover.dev/v1alpha1}, task names, times), in the informer's cache, the
 * runners' copies of specs and the statuses read back, each read on its own. A string of at most
 * {@link #MAX_LENGTH} characters is looked up in a fixed table by its hash: an equal one there is returned instead,
 * else it takes the slot. The table is lossy (a slot holds the last string that hashed to it), small (it keeps at most
 * {@link #SLOTS} strings alive) and lock-free (a String is immutable, so a racy read of a slot sees a whole one).
 */
public final class SharedStrings {

    /** Longer strings (uids, messages) are mostly unique and are read as they are. */
    static final int MAX_LENGTH = 32;

    static final int SLOTS = 4096;

    private static final String[] TABLE = new String[SLOTS];

    private SharedStrings() {}

    /** {@code s}, or an equal string read before. */
    public static String share(String s) {
        if (s == null || s.length() > MAX_LENGTH) {
            return s;
        }
        int h = s.hashCode();
        int slot = (h ^ (h >>> 16)) & (SLOTS - 1);
        String known = TABLE[slot];
        if (s.equals(known)) {
            return known;
        }
        TABLE[slot] = s;
        return s;
    }

    /** The module that makes a mapper read every string value (a bean's field, a list's or map's element) shared. */
    static SimpleModule module() {
        return new SimpleModule("drover-shared-strings").addDeserializer(String.class, new Deserializer());
    }

    private static final class Deserializer extends StdScalarDeserializer<String> {

        Deserializer() {
            super(String.class);
        }

        @Override
        public String deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            if (p.hasToken(JsonToken.VALUE_STRING)) {
                return share(p.getText());
            }
            return StringDeserializer.instance.deserialize(p, ctxt); // numbers, nulls, arrays: as Jackson reads them
        }

        @Override
        public Object getEmptyValue(DeserializationContext ctxt) {
            return "";
        }
    }
}
