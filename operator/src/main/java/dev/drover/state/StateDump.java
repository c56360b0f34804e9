package dev.drover.state;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Base64;
import java.util.TreeMap;

/**
 * The whole durable store as one JSON document, for {@code state dump}. It
 * opens the file read-only and reads in one snapshot, so it neither blocks nor
 * disturbs a running agent (WAL readers do not block the writer).
 */
public final class StateDump {

    private StateDump() {}

    /** {@link #read} as indented JSON text, as {@code state dump} prints it. */
    public static String text(Path dataDir) throws IOException {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(read(dataDir));
    }

    /**
     * {@code {"file", "schemaVersion", "allocations": [{"id", "alloc", "allocState", "devices",
     * "tasks": {name: {"taskLocal", "taskState"}}}]}}; a value that is not JSON appears as
     * {@code {"undecodableBase64": ...}}.
     */
    static JsonNode read(Path dataDir) {
        Path file = dataDir.resolve(SqliteSchema.FILE_NAME);
        if (!Files.isRegularFile(file)) {
            throw new StateStoreException("no state store at " + file
                    + ": pass the agent's --data-dir (the directory that holds " + SqliteSchema.FILE_NAME + ")");
        }
        ObjectMapper mapper = new StateCodec().mapper();
        ObjectNode root = mapper.createObjectNode();
        root.put("file", file.toAbsolutePath().toString());
        TreeMap<String, ObjectNode> allocations = new TreeMap<>();
        try (Connection c = SqliteKvStore.connect(file, true);
                Statement s = c.createStatement()) {
            // One read transaction: the version and every row come from the same snapshot.
            s.execute("BEGIN");
            int version = SqliteSchema.readVersion(c, file);
            SqliteSchema.requireSupported(version, file);
            root.put("schemaVersion", version);
            if (version > 0) {
                try (ResultSet rs = s.executeQuery("SELECT bucket, key, value FROM kv ORDER BY bucket, key")) {
                    while (rs.next()) {
                        add(
                                allocations,
                                mapper,
                                Bucket.fromStoredName(rs.getString(1)),
                                rs.getString(2),
                                rs.getBytes(3));
                    }
                }
            }
            s.execute("COMMIT");
        } catch (SQLException e) {
            throw new StateStoreException("could not read state store " + file + ": " + e.getMessage(), e);
        }
        root.putArray("allocations").addAll(allocations.values());
        return root;
    }

    private static void add(
            TreeMap<String, ObjectNode> allocations, ObjectMapper mapper, Bucket bucket, String key, byte[] value) {
        String allocKey = bucket.allocationKey(key);
        ObjectNode alloc = allocations.computeIfAbsent(allocKey, k -> {
            ObjectNode node = mapper.createObjectNode();
            node.put("id", k);
            return node;
        });
        JsonNode decoded = decode(mapper, value);
        if (bucket.perTask()) {
            String task = key.substring(allocKey.length() + 1);
            ObjectNode tasks = alloc.has("tasks") ? (ObjectNode) alloc.get("tasks") : alloc.putObject("tasks");
            ObjectNode taskNode = tasks.has(task) ? (ObjectNode) tasks.get(task) : tasks.putObject(task);
            taskNode.set(bucket.storedName(), decoded);
        } else {
            alloc.set(bucket.storedName(), decoded);
        }
    }

    private static JsonNode decode(ObjectMapper mapper, byte[] value) {
        try {
            return mapper.readTree(value);
        } catch (IOException e) {
            ObjectNode raw = mapper.createObjectNode();
            raw.put("undecodableBase64", Base64.getEncoder().encodeToString(value));
            return raw;
        }
    }
}
