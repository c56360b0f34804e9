package dev.drover.state;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.util.Collection;
import java.util.Objects;

/**
 * Values to and from JSON bytes. Serialization is deterministic (map entries
 * sorted by key) because deduplication compares the bytes. The API model
 * (allocation specs, task states) is written by a mapper of its own, see
 * {@link #encodeModel}.
 */
final class StateCodec {

    private final ObjectMapper mapper = Jackson.builder(Jackson.factory())
            .addModule(new JavaTimeModule())
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            // A field added in a later release must not make an older value unreadable.
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    /**
     * The mapper the runners wrote the API model with before the store took types (they stored it as a tree
     * of this mapper): fields in the model's order, maps in their own (as the API server sent them). Writing
     * it the same way keeps the bytes on disk as they were, so a value unchanged across an upgrade is still a
     * duplicate, and an older store restores.
     */
    private final ObjectMapper model = Jackson.builder(Jackson.factory())
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    byte[] encode(Object value) {
        return encode(mapper, value);
    }

    /** An {@code Allocation} or {@code TaskState} of the API model. */
    byte[] encodeModel(Object value) {
        return encode(model, value);
    }

    <T> T decodeModel(byte[] bytes, Class<T> type, Bucket bucket, String key) {
        try {
            return whole(model.readValue(bytes, type), bucket, key);
        } catch (IOException e) {
            throw undecodable(bucket, key, e);
        }
    }

    private static byte[] encode(ObjectMapper mapper, Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    "cannot serialize " + value.getClass().getName() + " for the state store: " + e.getMessage(), e);
        }
    }

    <T> T decode(byte[] bytes, Class<T> type, Bucket bucket, String key) {
        try {
            return whole(mapper.readValue(bytes, type), bucket, key);
        } catch (IOException e) {
            throw undecodable(bucket, key, e);
        }
    }

    <T> T decode(byte[] bytes, TypeReference<T> type, Bucket bucket, String key) {
        try {
            return whole(mapper.readValue(bytes, type), bucket, key);
        } catch (IOException e) {
            throw undecodable(bucket, key, e);
        }
    }

    ObjectMapper mapper() {
        return mapper;
    }

    /**
     * {@code value}, unless it is JSON's {@code null} or a list holding one: valid JSON the agent never writes (a hand
     * edit, a tool's), which would fail later, outside the check of each entry, and stop the whole restore.
     */
    private static <T> T whole(T value, Bucket bucket, String key) {
        if (value == null || value instanceof Collection<?> c && c.stream().anyMatch(Objects::isNull)) {
            throw undecodable(bucket, key, "it holds null where a value belongs", null);
        }
        return value;
    }

    private static StateStoreException undecodable(Bucket bucket, String key, IOException e) {
        return undecodable(bucket, key, e.getMessage(), e);
    }

    private static StateStoreException undecodable(Bucket bucket, String key, String why, IOException cause) {
        return new StateStoreException(
                "state entry " + bucket.storedName() + "/" + key + " cannot be read: " + why
                        + " (inspect it with 'drover-agent.jar state dump'; deleting the allocation clears it)",
                cause);
    }
}
