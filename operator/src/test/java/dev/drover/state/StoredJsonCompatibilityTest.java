package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.TaskState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store written before the state store took the API model as types (the runners stored JSON trees of it)
 * restores with the typed layer, and what it holds stays the bytes the store writes.
 */
class StoredJsonCompatibilityTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final AllocId WEB = new AllocId("default", "web");

    /** An allocation as the API server sends it: maps in their own order, numbers of each kind in a config. */
    static final String ALLOCATION = """
            {
              "apiVersion": "drover.dev/v1alpha1",
              "kind": "Allocation",
              "metadata": {
                "name": "web",
                "namespace": "default",
                "uid": "0d6c1c52-7d4e-4a8e-9a55-2f6f0e0b9f3a",
                "generation": 3,
                "labels": {
                  "zone": "b",
                  "app": "web"
                },
                "annotations": {
                  "team": "search",
                  "drover.dev/note": "kept"
                }
              },
              "spec": {
                "nodeName": "node-1",
                "desiredStatus": "Run",
                "type": "Service",
                "previousAllocation": "web-old",
                "ephemeralDisk": {
                  "migrate": true,
                  "sizeMB": 300,
                  "sticky": true
                },
                "restartPolicy": {
                  "attempts": 3,
                  "interval": "5m",
                  "delay": "15s",
                  "mode": "Delay"
                },
                "tasks": [
                  {
                    "name": "main",
                    "driver": "raw_exec",
                    "leader": true,
                    "config": {
                      "command": "/bin/server",
                      "args": [
                        "--port",
                        "8080"
                      ],
                      "ratio": 1.5,
                      "retries": 3,
                      "big": 12345678901,
                      "nested": {
                        "z": true,
                        "a": null
                      }
                    },
                    "env": [
                      {
                        "name": "B",
                        "value": "2"
                      },
                      {
                        "name": "A",
                        "value": "1"
                      }
                    ],
                    "killTimeout": "30s",
                    "killSignal": "SIGTERM",
                    "shutdownDelay": "2s",
                    "resources": {
                      "cpuMillis": 500,
                      "memoryMB": 256,
                      "devices": [
                        {
                          "name": "nvidia/gpu",
                          "count": 1
                        }
                      ]
                    }
                  },
                  {
                    "name": "prep",
                    "driver": "mock",
                    "lifecycle": {
                      "hook": "Prestart",
                      "sidecar": false
                    },
                    "restartPolicy": {
                      "attempts": 0,
                      "mode": "Fail"
                    }
                  }
                ]
              }
            }""";

    static final String TASK_STATE = """
            {
              "state": "Running",
              "failed": false,
              "restarts": 2,
              "lastRestart": "2026-11-22T10:01:00.5Z",
              "startedAt": "2026-11-22T10:00:00Z",
              "events": [
                {
                  "type": "Received",
                  "time": "2026-11-22T09:59:59.125Z",
                  "message": "Task received by the agent"
                },
                {
                  "type": "Terminated",
                  "time": "2026-11-22T10:00:30Z",
                  "exitCode": 1,
                  "signal": "SIGKILL",
                  "message": "Exit code 1"
                },
                {
                  "type": "Restarting",
                  "time": "2026-11-22T10:00:31Z",
                  "startDelay": "15s",
                  "restartReason": "Restart within policy"
                },
                {
                  "type": "Started",
                  "time": "2026-11-22T10:01:00.5Z"
                }
              ]
            }""";

    /** What the agent stored for them through the runners' JSON trees, as read from its state.db. */
    static final String STORED_ALLOCATION =
            "{\"apiVersion\":\"drover.dev/v1alpha1\",\"kind\":\"Allocation\",\"metadata\":{\"annotations\":{\"team\":\"search\",\""
                    + "drover.dev/note\":\"kept\"},\"generation\":3,\"labels\":{\"zone\":\"b\",\"app\":\"web\"},\"name\":\"web\",\"namespace\":\""
                    + "default\",\"uid\":\"0d6c1c52-7d4e-4a8e-9a55-2f6f0e0b9f3a\"},\"spec\":{\"nodeName\":\"node-1\",\"desiredStatus\":\""
                    + "Run\",\"type\":\"Service\",\"previousAllocation\":\"web-old\",\"ephemeralDisk\":{\"sizeMB\":300,\"sticky\":true,\"mi"
                    + "grate\":true},\"restartPolicy\":{\"attempts\":3,\"interval\":\"5m\",\"delay\":\"15s\",\"mode\":\"Delay\"},\"tasks\":[{\""
                    + "name\":\"main\",\"driver\":\"raw_exec\",\"config\":{\"command\":\"/bin/server\",\"args\":[\"--port\",\"8080\"],\"ratio\":"
                    + "1.5,\"retries\":3,\"big\":12345678901,\"nested\":{\"z\":true,\"a\":null}},\"env\":[{\"name\":\"B\",\"value\":\"2\"},{\"na"
                    + "me\":\"A\",\"value\":\"1\"}],\"leader\":true,\"killTimeout\":\"30s\",\"killSignal\":\"SIGTERM\",\"shutdownDelay\":\"2s\","
                    + "\"resources\":{\"cpuMillis\":500,\"memoryMB\":256,\"devices\":[{\"name\":\"nvidia/gpu\",\"count\":1}]}},{\"name\":\"p"
                    + "rep\",\"driver\":\"mock\",\"lifecycle\":{\"hook\":\"Prestart\",\"sidecar\":false},\"restartPolicy\":{\"attempts\":0,\""
                    + "mode\":\"Fail\"}}]}}";

    static final String STORED_TASK_STATE =
            "{\"state\":\"Running\",\"failed\":false,\"restarts\":2,\"lastRestart\":\"2026-11-22T10:01:00.5Z\",\"startedAt\":\"2"
                    + "026-11-22T10:00:00Z\",\"events\":[{\"type\":\"Received\",\"time\":\"2026-11-22T09:59:59.125Z\",\"message\":\"Task "
                    + "received by the agent\"},{\"type\":\"Terminated\",\"time\":\"2026-11-22T10:00:30Z\",\"message\":\"Exit code 1\",\""
                    + "exitCode\":1,\"signal\":\"SIGKILL\"},{\"type\":\"Restarting\",\"time\":\"2026-11-22T10:00:31Z\",\"startDelay\":\"15s"
                    + "\",\"restartReason\":\"Restart within policy\"},{\"type\":\"Started\",\"time\":\"2026-11-22T10:01:00.5Z\"}]}";

    @TempDir
    Path dataDir;

    @BeforeEach
    void writeTheStoreAsThePreviousReleaseDid() {
        try (SqliteKvStore kv = SqliteKvStore.open(dataDir)) {
            kv.submit(List.of(
                            put(Bucket.ALLOC, WEB.key(), STORED_ALLOCATION),
                            put(Bucket.TASK_STATE, WEB.taskKey("main"), STORED_TASK_STATE)))
                    .join();
        }
    }

    @Test
    void specAndTaskStateStoredAsJsonRestoreAsTheSameValues() throws Exception {
        try (StateDB db = StateStores.open(dataDir)) {
            StoredAllocation web = db.loadAll().getFirst();

            assertThat(web.damaged()).isFalse();
            assertThat(web.spec()).contains(JSON.readValue(ALLOCATION, Allocation.class));
            assertThat(web.tasks().get("main").state()).contains(JSON.readValue(TASK_STATE, TaskState.class));
            assertThat(db.getAllocation(WEB)).isEqualTo(web.spec());
        }
    }

    @Test
    void unchangedValuesPutAgainAfterTheUpgradeWriteNothing() throws Exception {
        try (StateDB db = StateStores.open(dataDir)) {
            StoredAllocation web = db.loadAll().getFirst();

            db.putAllocation(WEB, web.spec().orElseThrow());
            db.putTaskState(WEB, "main", web.tasks().get("main").state().orElseThrow());
            db.putAllocation(WEB, JSON.readValue(ALLOCATION, Allocation.class));
            db.putTaskState(WEB, "main", JSON.readValue(TASK_STATE, TaskState.class));

            assertThat(db.stats().writes())
                    .as("the same bytes as before: duplicates")
                    .isZero();
            assertThat(db.stats().transactions()).isZero();
            assertThat(db.stats().deduplicated()).isEqualTo(4);
        }
    }

    private static Mutation.Put put(Bucket bucket, String key, String json) {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        return new Mutation.Put(bucket, key, bytes, Blake2b.hash256(bytes));
    }
}
