package dev.drover.state;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;

/**
 * Values to and from JSON bytes. Serialization is deterministic (map entries
 * sorted by key) because deduplication compares the bytes.
 */
final class StateCodec {

    private final ObjectMapper mapper = JsonMapper.builder(Jackson.factory())
            .addModule(new JavaTimeModule())
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            // A field added in a later release must not make an older value unreadable.
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    byte[] encode(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot serialize " + value.getClass().getName() + " for the state store: "
                    + e.getMessage(), e);
        }
    }

    <T> T decode(byte[] bytes, Class<T> type, Bucket bucket, String key) {
        try {
            return mapper.readValue(bytes, type);
        } catch (IOException e) {
            throw undecodable(bucket, key, e);
        }
    }

    <T> T decode(byte[] bytes, TypeReference<T> type, Bucket bucket, String key) {
        try {
            return mapper.readValue(bytes, type);
        } catch (IOException e) {
            throw undecodable(bucket, key, e);
        }
    }

    JsonNode tree(byte[] bytes, Bucket bucket, String key) {
        return decode(bytes, JsonNode.class, bucket, key);
    }

    ObjectMapper mapper() {
        return mapper;
    }

    private static StateStoreException undecodable(Bucket bucket, String key, IOException e) {
        return new StateStoreException("state entry " + bucket.storedName() + "/" + key + " cannot be read: "
                + e.getMessage() + " (inspect it with 'drover-agent.jar state dump'; deleting the allocation clears it)", e);
    }
}
