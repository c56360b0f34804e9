package dev.drover.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AllocationJsonTest {

    static Allocation full() {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web-1")
                .withNamespace("default")
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("node-1");
        spec.setDesiredStatus(DesiredStatus.Run);
        spec.setType(AllocationType.Service);
        spec.setPreviousAllocation("web-0");
        spec.setEphemeralDisk(new EphemeralDisk(0, false, true));
        spec.setRestartPolicy(new RestartPolicy(0, "1m", "1s", RestartMode.Fail));
        Task web = new Task();
        web.setName("web");
        web.setDriver("mock");
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("runFor", "1h");
        config.put("exitCode", 3);
        config.put("startErrorRecoverable", false);
        web.setConfig(config);
        web.setEnv(List.of(new EnvVar("A", "1"), new EnvVar("EMPTY", "")));
        web.setLeader(false);
        web.setLifecycle(new Lifecycle(LifecycleHook.Prestart, false));
        web.setKillTimeout("0s");
        web.setKillSignal("SIGINT");
        web.setShutdownDelay("250ms");
        Resources resources = new Resources();
        resources.setCpuMillis(0);
        resources.setMemoryMB(128);
        resources.setDevices(List.of(new DeviceRequest("nvidia/gpu", 1)));
        web.setResources(resources);
        spec.setTasks(List.of(web));
        a.setSpec(spec);

        AllocationStatus status = new AllocationStatus();
        status.setClientStatus(ClientStatus.Running);
        status.setClientDescription("Tasks are running");
        status.setObservedGeneration(0L);
        TaskState state = new TaskState();
        state.setState(TaskState.State.Running);
        state.setFailed(false);
        state.setRestarts(0);
        state.setStartedAt("2026-11-22T10:00:00.123Z");
        state.setEvents(List.of(
                TaskEvent.of(TaskEventType.Terminated, Instant.parse("2026-11-22T10:00:01Z"))
                        .withExit(0, null),
                TaskEvent.of(TaskEventType.Restarting, Instant.parse("2026-11-22T10:00:02Z"))
                        .withStartDelay(java.time.Duration.ofMillis(1200))
                        .withRestartReason("Restart within policy")));
        status.setTaskStates(new LinkedHashMap<>(Map.of("web", state)));
        status.setAllocatedDevices(List.of(new AllocatedDevice("web", "nvidia", "gpu", "Tesla T4", List.of("GPU-1"))));
        status.setConditions(List.of(new ConditionBuilder()
                .withType("Ready")
                .withStatus("True")
                .withReason("TasksRunning")
                .withLastTransitionTime("2026-11-22T10:00:00Z")
                .build()));
        status.setReady("1/1");
        status.setRestarts(0);
        a.setStatus(status);
        return a;
    }

    @Test
    void jsonRoundTripKeepsEveryField() {
        Allocation original = full();
        String json = Serialization.asJson(original);
        Allocation back = Serialization.unmarshal(json, Allocation.class);
        assertThat(back.getSpec()).isEqualTo(original.getSpec());
        assertThat(back.getStatus()).isEqualTo(original.getStatus());
        assertThat(Serialization.asJson(back)).isEqualTo(json);
    }

    @Test
    void zeroAndFalseStayDistinctFromUnset() {
        String json = Serialization.asJson(full());
        assertThat(json)
                .contains(
                        "\"attempts\":0",
                        "\"sizeMB\":0",
                        "\"leader\":false",
                        "\"sticky\":false",
                        "\"cpuMillis\":0",
                        "\"killTimeout\":\"0s\"",
                        "\"observedGeneration\":0");

        Allocation sparse = Serialization.unmarshal("""
                {"apiVersion":"drover.dev/v1alpha1","kind":"Allocation","metadata":{"name":"x"},
                 "spec":{"nodeName":"n","tasks":[{"name":"t","driver":"mock"}]}}""", Allocation.class);
        Task t = sparse.getSpec().getTasks().getFirst();
        assertThat(t.getLeader()).isNull();
        assertThat(t.getKillTimeout()).isNull();
        assertThat(sparse.getSpec().getRestartPolicy()).isNull();
        assertThat(sparse.getSpec().getEphemeralDisk()).isNull();
        assertThat(Serialization.asJson(sparse)).doesNotContain("leader", "attempts", "sizeMB", "killTimeout");
    }

    @Test
    void enumsSerializeAsTheApiSpellsThem() {
        String json = Serialization.asJson(full());
        assertThat(json)
                .contains(
                        "\"desiredStatus\":\"Run\"",
                        "\"type\":\"Service\"",
                        "\"mode\":\"Fail\"",
                        "\"hook\":\"Prestart\"",
                        "\"clientStatus\":\"Running\"",
                        "\"state\":\"Running\"",
                        "\"type\":\"Terminated\"",
                        "\"startDelay\":\"1s200ms\"");
    }

    @Test
    void parsesTheApiExampleFromYaml() {
        Allocation a = Serialization.unmarshal("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: hello, namespace: default}
                spec:
                  nodeName: node-1
                  restartPolicy: {attempts: 2, interval: 1m, delay: 1s, mode: Fail}
                  tasks:
                  - name: web
                    driver: mock
                    config: {runFor: 1h}
                    leader: true
                  - name: init
                    driver: mock
                    config: {runFor: 100ms}
                    lifecycle: {hook: Prestart}
                """, Allocation.class);
        assertThat(a.getMetadata().getName()).isEqualTo("hello");
        assertThat(a.getSpec().getTasks()).extracting(Task::getName).containsExactly("web", "init");
        assertThat(a.getSpec().task("web").isLeaderTask()).isTrue();
        assertThat(a.getSpec().task("web").getConfig()).containsEntry("runFor", "1h");
        assertThat(a.getSpec().task("init").hook()).isEqualTo(LifecycleHook.Prestart);
        assertThat(a.getSpec().getRestartPolicy()).isEqualTo(new RestartPolicy(2, "1m", "1s", RestartMode.Fail));
    }

    @Test
    void devicesSummaryCountsHeldInstancesByKindForKubectlGetWide() {
        AllocationStatus s = new AllocationStatus();
        s.setAllocatedDevices(List.of(
                new AllocatedDevice("train", "nvidia", "gpu", "a100", List.of("0", "1")),
                new AllocatedDevice("eval", "nvidia", "gpu", "a100", List.of("2")),
                new AllocatedDevice("io", "intel", "fpga", null, List.of("f0")),
                new AllocatedDevice("idle", "amd", "gpu", null, List.of())));
        assertThat(s.getDevices()).isEqualTo("3 nvidia/gpu, 1 intel/fpga");
        assertThat(Serialization.asJson(s)).contains("\"devices\":\"3 nvidia/gpu, 1 intel/fpga\"");
        s.setAllocatedDevices(List.of());
        assertThat(s.getDevices()).as("none held: no cell").isNull();
    }

    @Test
    void resourceIdentityMatchesTheCrd() {
        Allocation a = new Allocation();
        assertThat(a.getApiVersion()).isEqualTo("drover.dev/v1alpha1");
        assertThat(a.getKind()).isEqualTo("Allocation");
        assertThat(io.fabric8.kubernetes.api.model.HasMetadata.getPlural(Allocation.class))
                .isEqualTo("allocations");
    }

    @Test
    void unknownEnumValueFailsToParseNamingTheValue() {
        // The CRD's enum schema rejects such a value at the API server; a client reading one gets an error, not a null.
        assertThatThrownBy(() -> Serialization.unmarshal("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: x}
                spec:
                  nodeName: n
                  desiredStatus: Pause
                  tasks: [{name: t, driver: mock}]
                """, Allocation.class)).hasStackTraceContaining("Pause");
    }
}
