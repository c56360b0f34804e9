package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Task;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class SharedStringsTest {

    static final String ALLOCATION = """
            {"apiVersion": "drover.dev/v1alpha1", "kind": "Allocation",
             "metadata": {"name": "web-1", "namespace": "default",
                          "uid": "0b6c6f0e-8a44-4d7e-9a57-7d6c1c8f4e21"},
             "spec": {"nodeName": "node-a", "tasks": [
                 {"name": "web", "driver": "mock", "killSignal": "SIGTERM", "killTimeout": 5,
                  "config": {"run_for": "24h"}, "env": [{"name": "PASSWORD", "value": "hunter2"}]}]},
             "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
            """;

    /** Thousands of allocations read the same values: each short one is held once. */
    @Test
    void anAllocationsShortValuesReadTwiceAreOneInstance() throws Exception {
        SharedStrings strings = new SharedStrings();
        ObjectMapper mapper = JsonMapper.builder()
                .addModule(strings.module(SharedStrings::allocationPart))
                .build();
        Allocation a = mapper.readValue(ALLOCATION, Allocation.class);
        Allocation b = mapper.readValue(ALLOCATION, Allocation.class);
        Task ta = a.getSpec().getTasks().getFirst();
        Task tb = b.getSpec().getTasks().getFirst();

        assertThat(tb.getKillSignal()).isEqualTo("SIGTERM").isSameAs(ta.getKillSignal());
        assertThat(tb.getDriver()).isSameAs(ta.getDriver());
        assertThat(tb.getKillTimeout())
                .as("a number read into a string, as Jackson does")
                .isEqualTo("5");
        assertThat(b.getMetadata().getNamespace()).isSameAs(a.getMetadata().getNamespace());
        assertThat(b.getSpec().getNodeName()).isSameAs(a.getSpec().getNodeName());
        assertThat(b.getStatus().getConditions().getFirst().getStatus())
                .isSameAs(a.getStatus().getConditions().getFirst().getStatus());

        assertThat(b.getMetadata().getUid())
                .as("longer than 32")
                .isNotSameAs(a.getMetadata().getUid());
        assertThat(tb.getEnv().getFirst().getValue())
                .as("a literal env value is not kept in the table")
                .isEqualTo("hunter2")
                .isNotSameAs(ta.getEnv().getFirst().getValue());
    }

    /** The agent runs on C1, which does not inline reflection: a shared field is still set by Blackbird's setter. */
    @Test
    void theAgentsMappersSetASharedFieldThroughBlackbirdsGeneratedSetter() throws Exception {
        ObjectMapper mapper = Jackson.mapper();
        var context = ((com.fasterxml.jackson.databind.deser.DefaultDeserializationContext)
                        mapper.getDeserializationContext())
                .createInstance(mapper.getDeserializationConfig(), null, mapper.getInjectableValues());
        var tasks = (com.fasterxml.jackson.databind.deser.BeanDeserializerBase)
                context.findRootValueDeserializer(mapper.constructType(Task.class));
        assertThat(tasks.findProperty("killSignal"))
                .isInstanceOfSatisfying(
                        SharedStrings.SharedStringProperty.class,
                        p -> assertThat(p.wrapped().getClass().getName()).contains("blackbird"));
        assertThat(mapper.readValue("{\"killSignal\": \"SIGINT\"}", Task.class).getKillSignal())
                .isEqualTo("SIGINT");
    }

    @Test
    void aNullStaysNullAndAnEmptyStringIsEmpty() throws Exception {
        ObjectMapper mapper = Jackson.mapper();
        Task t = mapper.readValue("{\"name\": \"web\", \"killSignal\": null, \"user\": \"\"}", Task.class);
        assertThat(t.getKillSignal()).isNull();
        assertThat(t.getUser()).isEmpty();
        assertThat(new SharedStrings().share(null)).isNull();
    }

    /**
     * Untyped values (a task's driver config, fields the model does not know) keep Jackson's non-recursive reader: a
     * deeply nested value does not overflow the reading thread's stack.
     */
    @Test
    void aDeeplyNestedUntypedValueIsReadWithoutRecursion() throws Exception {
        ObjectMapper mapper = Jackson.mapper(Jackson.factory()
                .rebuild()
                .streamReadConstraints(
                        StreamReadConstraints.builder().maxNestingDepth(20_000).build())
                .build());
        String deep = "[".repeat(15_000) + "]".repeat(15_000);
        AtomicReference<Object> read = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread small = new Thread(
                null,
                () -> {
                    try {
                        read.set(mapper.readValue(deep, Object.class));
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                },
                "small-stack",
                256 * 1024);
        small.start();
        small.join();
        assertThat(failure.get()).isNull();
        assertThat(read.get()).isInstanceOf(List.class);
    }
}
