package dev.drover.cli;

import static dev.drover.cli.AllocStatusTest.NOW;
import static dev.drover.cli.AllocStatusTest.kubeEvent;
import static dev.drover.cli.AllocStatusTest.running;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationType;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.DesiredStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventListBuilder;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.MicroTimeBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The plugin's own reading of an allocation's JSON shows what Jackson's data binding into the model shows. */
class AllocationJsonTest {

    static final ObjectMapper JSON = new ObjectMapper();

    /** An allocation with everything status shows: checks, devices, a deletion, generations, a previous one. */
    static Allocation rich() {
        Allocation a = running();
        a.getStatus()
                .getTaskStates()
                .get("web")
                .setChecks(List.of(
                        new CheckStatus("http", CheckStatus.Status.CRITICAL, "HTTP 503", "2026-11-22T10:03:00Z"),
                        new CheckStatus("tcp", CheckStatus.Status.PASSING, "", "2026-11-22T10:02:40Z")));
        a.getMetadata().setDeletionTimestamp("2026-11-22T10:03:00Z");
        a.getMetadata().setGeneration(3L);
        a.getSpec().setType(AllocationType.Batch);
        a.getSpec().setDesiredStatus(DesiredStatus.Stop);
        a.getSpec().setPreviousAllocation("web-0");
        a.getStatus().getTaskStates().get("init").setFailed(true);
        return a;
    }

    @Test
    void statusShowsTheSameAsWithDataBinding() throws Exception {
        Event once = kubeEvent("a", "Normal", "Started", "Task web: started", "2026-11-22T10:00:01Z");
        Event often = kubeEvent("b", "Warning", "Terminated", "Task web: Exit Code: 1", "2026-11-22T10:02:31Z");
        often.setCount(4);
        Event micro = kubeEvent("c", "Warning", "NotRestarting", "Task web: gave up", null);
        micro.setEventTime(new MicroTime("2026-11-22T10:02:00.123456Z"));
        Event series = kubeEvent("d", "Normal", "Signaling", "Task web: SIGHUP", null);
        series.setSeries(new io.fabric8.kubernetes.api.model.EventSeries(
                7, new MicroTimeBuilder().withTime("2026-11-22T10:02:50Z").build()));
        List<Event> events = List.of(once, often, micro, series);
        for (Allocation a : List.of(running(), rich())) {
            String json = JSON.writeValueAsString(a);
            String eventsJson = JSON.writeValueAsString(
                    new EventListBuilder().withItems(events).build());

            String bound = AllocStatus.render(
                    JSON.readValue(json, Allocation.class),
                    JSON.readValue(eventsJson, io.fabric8.kubernetes.api.model.EventList.class)
                            .getItems(),
                    NOW);
            String read = AllocStatus.render(
                    AllocationJson.allocation(JSON.readTree(json)),
                    AllocationJson.events(JSON.readTree(eventsJson)),
                    NOW);

            assertThat(read).isEqualTo(bound).contains("Task \"web\"", "Events:");
        }
        assertThat(AllocStatus.render(
                        AllocationJson.allocation(JSON.readTree(JSON.writeValueAsString(rich()))), List.of(), NOW))
                .contains("critical", "passing", "Deleting", "Previous Allocation", "Batch", "(failed)");
    }

    @Test
    void fieldsOfTheWrongTypeOrUnknownValuesAreLeftOutNotFatal() throws Exception {
        AllocationParts a = AllocationJson.allocation(JSON.readTree("""
                {"metadata": {"name": ["not", "text"], "generation": "three"},
                 "spec": {"type": "Daemon", "tasks": [null, {"name": "web", "leader": "yes"}, 7]},
                 "status": {"clientStatus": 5, "taskStates": {"web": {"state": "Sleeping", "restarts": "2",
                            "events": [{"type": "Teleported", "exitCode": 1.5e400}]}, "odd": []}}}
                """));
        assertThat(a.metadata().getName()).isNull();
        assertThat(a.metadata().getGeneration()).isNull();
        assertThat(a.spec().getType()).isNull();
        assertThat(a.spec().getTasks().get(1).isLeaderTask()).isFalse();
        assertThat(a.status().getClientStatus()).isNull();
        assertThat(a.status().getTaskStates()).containsOnlyKeys("web");
        assertThat(a.status().getTaskStates().get("web").getState()).isNull();
        String out = AllocStatus.render(a, List.of(), NOW);
        assertThat(out).contains("Task \"web\" is \"Unknown\"");
    }
}
