package dev.drover.controller.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Kubernetes Events from task events, against an API server that grants what the chart's ClusterRole grants. */
class EventRecorderTest {

    /** The chart grants create and patch on events, not get: a GET is refused as a real cluster would. */
    static final class EventsWithoutGet extends KubernetesCrudDispatcher {
        final AtomicInteger refusedReads = new AtomicInteger();
        final List<String> patches = new java.util.concurrent.CopyOnWriteArrayList<>();

        EventsWithoutGet() {
            super(new ArrayList<>());
        }

        @Override
        public MockResponse dispatch(RecordedRequest request) {
            if (request.getMethod().equals("GET")
                    && request.getPath().contains("/events/")) { // a list is the test reading
                refusedReads.incrementAndGet();
                return new MockResponse().setResponseCode(403).setBody("""
                        {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,
                         "message":"events is forbidden: User cannot get resource events"}""");
            }
            if (request.getMethod().equals("PATCH")) {
                patches.add(request.getHeader("Content-Type") + " "
                        + new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8));
            }
            return super.dispatch(request);
        }
    }

    final EventsWithoutGet dispatcher = new EventsWithoutGet();
    KubernetesMockServer server;
    KubernetesClient client;

    @BeforeEach
    void start() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient(new JdkHttpClientFactory());
    }

    @AfterEach
    void stop() {
        client.close();
        server.destroy();
    }

    static Allocation alloc() {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web")
                .withNamespace("default")
                .withUid("uid-1")
                .build());
        return a;
    }

    static TaskEvent restarting() {
        TaskEvent e = new TaskEvent();
        e.setType(TaskEventType.Restarting);
        e.setMessage("Task restarting in 1s");
        e.setTime(Instant.parse("2026-11-23T10:00:00Z").toString());
        return e;
    }

    List<Event> events() {
        return client.v1().events().inNamespace("default").list().getItems();
    }

    int counted() {
        return events().stream().mapToInt(Event::getCount).sum();
    }

    static TaskEvent event(TaskEventType type, String message, Integer exitCode) {
        TaskEvent e = new TaskEvent();
        e.setType(type);
        e.setMessage(message);
        e.setExitCode(exitCode);
        e.setTime(Instant.parse("2026-11-23T10:00:00Z").toString());
        return e;
    }

    static final List<TaskEventType> ROUTINE = List.of(
            TaskEventType.Received,
            TaskEventType.TaskSetup,
            TaskEventType.Started,
            TaskEventType.Killing,
            TaskEventType.Killed);

    /** An ordinary start and stop of task web, an exit of 0 and one of 3, a restart and a setup failure. */
    private static void recordALife(EventRecorder recorder) {
        for (TaskEventType routine : ROUTINE) {
            recorder.record(alloc(), "web", event(routine, routine.name(), null), InstantSource.system());
        }
        recorder.record(alloc(), "web", event(TaskEventType.Terminated, "Exit Code: 0", 0), InstantSource.system());
        recorder.record(alloc(), "web", event(TaskEventType.Terminated, "Exit Code: 3", 3), InstantSource.system());
        recorder.record(alloc(), "web", restarting(), InstantSource.system());
        recorder.record(
                alloc(), "web", event(TaskEventType.SetupFailure, "no such Secret", null), InstantSource.system());
    }

    /** A recorder that makes every task event its own Event. */
    EventRecorder everyEvent(EventRecorder.Sink sink) {
        return new EventRecorder(sink, "node-a", new EventRate(1000, 1000), TaskEventFilter.ALL);
    }

    @Test
    void allMakesEveryTaskEventAnEventTheOrdinaryStartAndStopToo() {
        try (EventRecorder recorder = everyEvent(new EventPoster(client))) {
            recordALife(recorder);
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 9);
            assertThat(events())
                    .extracting(e -> e.getType() + " " + e.getReason() + " " + e.getMessage())
                    .containsExactlyInAnyOrder(
                            "Normal Received Task web: Received",
                            "Normal TaskSetup Task web: TaskSetup",
                            "Normal Started Task web: Started",
                            "Normal Killing Task web: Killing",
                            "Normal Killed Task web: Killed",
                            "Normal Terminated Task web: Exit Code: 0",
                            "Warning Terminated Task web: Exit Code: 3",
                            "Normal Restarting Task web: Task restarting in 1s",
                            "Warning SetupFailure Task web: no such Secret");
        }
    }

    @Test
    void notableRecordsWarningsOnlyAndLeavesEveryNormalTaskEventToStatus() {
        try (EventRecorder recorder = new EventRecorder(
                new EventPoster(client), "node-a", new EventRate(1000, 1000), TaskEventFilter.NOTABLE)) {
            recordALife(recorder);
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 2);
            assertThat(events())
                    .extracting(e -> e.getType() + " " + e.getReason() + " " + e.getMessage())
                    .containsExactlyInAnyOrder(
                            "Warning Terminated Task web: Exit Code: 3",
                            "Warning SetupFailure Task web: no such Secret");
            assertThat(recorder.dropped()).as("left to status, not dropped").isZero();
        }
    }

    /** A long task message is cut once, saying how long the whole Event message was. */
    @Test
    void aLongTaskMessageIsCutOnceWithItsWholeLength() {
        try (EventRecorder recorder = new EventRecorder(new EventPoster(client), "node-a", new EventRate(1000, 1000))) {
            recorder.record(
                    alloc(), "web", event(TaskEventType.DriverFailure, "x".repeat(1500), null), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 1);
            assertThat(events()).singleElement().satisfies(e -> {
                assertThat(e.getMessage()).startsWith("Task web: xxx").endsWith("... (1510 characters)");
                assertThat(e.getMessage()).hasSizeLessThanOrEqualTo(EventRecorder.MESSAGE_LIMIT);
            });
        }
    }

    /**
     * kubectl describe orders Events by their second-precise lastTimestamp and leaves those of one second in the
     * order the API server lists them, by name: the names of one allocation's Events sort as their times.
     */
    @Test
    void theNamesOfOneAllocationsEventsSortAsTheTimesTheyHappened() {
        try (EventRecorder recorder = everyEvent(new EventPoster(client))) {
            String[] at = {"2026-11-23T10:00:00.900Z", "2026-11-23T10:00:00.000120Z", "2026-11-23T10:00:00.450Z"};
            TaskEventType[] types = {TaskEventType.Started, TaskEventType.Received, TaskEventType.TaskSetup};
            for (int i = 0; i < types.length; i++) {
                TaskEvent e = event(types[i], types[i].name(), null);
                e.setTime(at[i]);
                recorder.record(alloc(), "web", e, InstantSource.system());
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 3);
        }
        assertThat(events().stream()
                        .sorted(java.util.Comparator.comparing(
                                e -> e.getMetadata().getName()))
                        .toList())
                .extracting(Event::getReason)
                .containsExactly("Received", "TaskSetup", "Started");
        assertThat(events()).allSatisfy(e -> assertThat(e.getLastTimestamp()).isEqualTo("2026-11-23T10:00:00Z"));
    }

    @Test
    void aRepeatCountsOnOneEvent() {
        try (EventRecorder recorder = everyEvent(new EventPoster(client))) {
            for (int i = 0; i < 3; i++) {
                recorder.record(alloc(), "web", restarting(), InstantSource.system());
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 3);
            assertThat(recorder.failed()).isZero();
        }
        assertThat(dispatcher.refusedReads)
                .as("GETs on events, which the ClusterRole does not grant")
                .hasValue(0);
        assertThat(dispatcher.patches)
                .as("a merge patch of the count and time, nothing else")
                .hasSize(2)
                .allSatisfy(p -> assertThat(p)
                        .startsWith("application/merge-patch+json")
                        .contains("\"count\":", "\"lastTimestamp\":")
                        .doesNotContain("\"message\"", "\"reason\""));
        assertThat(events()).singleElement().satisfies(e -> {
            assertThat(e.getCount()).isEqualTo(3);
            assertThat(e.getReason()).isEqualTo("Restarting");
            assertThat(e.getMessage()).isEqualTo("Task web: Task restarting in 1s");
        });
    }

    @Test
    void aCheckThatStopsPassingIsAWarningAndOneThatPassesAgainIsNormal() {
        TaskEvent critical = TaskEvent.of(TaskEventType.CheckStatusChanged, Instant.parse("2026-11-23T10:00:00Z"))
                .withCheck("http", CheckStatus.Status.CRITICAL)
                .withMessage("check \"http\" is critical (was passing): HTTP 503: down");
        TaskEvent passing = TaskEvent.of(TaskEventType.CheckStatusChanged, Instant.parse("2026-11-23T10:00:05Z"))
                .withCheck("http", CheckStatus.Status.PASSING)
                .withMessage("check \"http\" is passing (was critical): HTTP 200: ok");
        try (EventRecorder recorder = everyEvent(new EventPoster(client))) {
            recorder.record(alloc(), "web", critical, InstantSource.system());
            recorder.record(alloc(), "web", passing, InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 2);
        }
        assertThat(events())
                .extracting(Event::getType, Event::getReason, Event::getMessage)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(
                                "Warning",
                                "CheckStatusChanged",
                                "Task web: check \"http\" is critical (was passing): HTTP 503: down"),
                        org.assertj.core.groups.Tuple.tuple(
                                "Normal",
                                "CheckStatusChanged",
                                "Task web: check \"http\" is passing (was critical): HTTP 200: ok"));
    }

    @Test
    void eventsAreReportedAsTheAgentsNodeAsTheChartsConfinementRequires() {
        try (EventRecorder recorder = new EventRecorder(new EventPoster(client), "node-a", new EventRate(1000, 1000))) {
            recorder.record(alloc(), "web", restarting(), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 1);
        }
        assertThat(events()).singleElement().satisfies(e -> {
            assertThat(e.getSource().getHost()).isEqualTo("node-a");
            assertThat(e.getReportingInstance()).isEqualTo("node-a");
            assertThat(e.getReportingComponent()).isEqualTo("drover.dev/agent");
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("Allocation");
            assertThat(e.getInvolvedObject().getApiVersion()).startsWith("drover.dev/");
        });
    }

    @Test
    void aRestartedAgentRecordsRepeatsWithoutReadingEvents() {
        for (int agent = 0; agent < 2; agent++) {
            try (EventRecorder recorder = everyEvent(new EventPoster(client))) {
                recorder.record(alloc(), "web", restarting(), InstantSource.system());
                recorder.record(alloc(), "web", restarting(), InstantSource.system());
                await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() + recorder.failed() == 2);
                assertThat(recorder.failed()).as("writes refused").isZero();
            }
        }
        assertThat(dispatcher.refusedReads)
                .as("GETs on events, which the ClusterRole does not grant")
                .hasValue(0);
        assertThat(counted()).as("every occurrence is counted on some Event").isEqualTo(4);
    }

    @Test
    void anEventOfTheSameNameStartsANewSeriesBesideIt() {
        String incarnation = "0123456789abcdef";
        EventRecorder.Pending pending = new EventRecorder.Pending(
                alloc(),
                "Normal",
                "Restarting",
                "Task web: Task restarting in 1s",
                Instant.parse("2026-11-23T10:00:00Z"));
        Event squatter = new Event();
        squatter.setMetadata(new ObjectMetaBuilder()
                .withName(pending.name(incarnation))
                .withNamespace("default")
                .build());
        squatter.setCount(7);
        client.v1().events().inNamespace("default").resource(squatter).create();

        try (EventRecorder recorder = new EventRecorder(
                new EventPoster(client), "node-a", new EventRate(1000, 1000), TaskEventFilter.ALL, incarnation)) {
            recorder.record(alloc(), "web", restarting(), InstantSource.system());
            recorder.record(alloc(), "web", restarting(), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() + recorder.failed() == 2);
            assertThat(recorder.failed()).isZero();
        }
        assertThat(dispatcher.refusedReads).hasValue(0);
        assertThat(counted())
                .as("the squatter's 7 untouched, 2 on the new series")
                .isEqualTo(9);
    }

    @Test
    void anEventTheApiServerExpiredIsCreatedAgainOnTheNextRepeat() {
        RecordedEvents sink = new RecordedEvents();
        try (EventRecorder recorder = everyEvent(sink)) {
            recorder.record(alloc(), "web", restarting(), InstantSource.system());
            recorder.record(alloc(), "web", restarting(), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 2);
            Event counted = sink.all().getFirst();
            assertThat(counted.getCount()).isEqualTo(2);
            sink.expire(counted.getMetadata().getName());

            recorder.record(alloc(), "web", restarting(), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.failed() == 1);
            recorder.record(alloc(), "web", restarting(), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 3);
        }
        assertThat(sink.all())
                .as("a new series, counted from one")
                .singleElement()
                .satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
    }

    static TaskEvent at(TaskEventType type, String message, Instant time) {
        TaskEvent e = event(type, message, null);
        e.setTime(time.toString());
        return e;
    }

    @Test
    void aStartOfTwoTasksIsOneStartedEventNamingBothByDefault() {
        Instant t0 = Instant.parse("2026-11-23T10:00:00Z");
        try (EventRecorder recorder = new EventRecorder(new EventPoster(client), "node-a", new EventRate(1000, 1000))) {
            for (String task : List.of("init", "web")) {
                recorder.record(alloc(), task, at(TaskEventType.Received, "Received", t0), InstantSource.system());
                recorder.record(alloc(), task, at(TaskEventType.TaskSetup, "set up", t0), InstantSource.system());
                recorder.record(
                        alloc(), task, at(TaskEventType.Started, "Started", t0.plusSeconds(2)), InstantSource.system());
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 1);
        }
        assertThat(events()).singleElement().satisfies(e -> {
            assertThat(e.getType()).isEqualTo("Normal");
            assertThat(e.getReason()).isEqualTo("Started");
            assertThat(e.getMessage()).isEqualTo("Received, TaskSetup, Started: tasks init, web");
            assertThat(e.getFirstTimestamp()).isEqualTo("2026-11-23T10:00:00Z");
            assertThat(e.getLastTimestamp()).isEqualTo("2026-11-23T10:00:02Z");
            assertThat(e.getCount()).isEqualTo(1);
        });
    }

    /** The writer's clock stands still in these: a fold closes only when the test says so. */
    final AtomicLong ticks = new AtomicLong();

    EventRecorder folding(EventRecorder.Sink sink) {
        return new EventRecorder(
                sink, "node-a", new EventRate(1000, 1000), TaskEventFilter.FOLDED, "0123456789abcdef", ticks::get);
    }

    @Test
    void aWarningClosesItsAllocationsFoldFirstAndIsWrittenAtOnce() {
        RecordedEvents sink = new RecordedEvents();
        Instant t0 = Instant.parse("2026-11-23T10:00:00Z");
        try (EventRecorder recorder = folding(sink)) {
            recorder.record(alloc(), "web", at(TaskEventType.Received, "Received", t0), InstantSource.system());
            recorder.record(alloc(), "web", at(TaskEventType.TaskSetup, "set up", t0), InstantSource.system());
            recorder.record(
                    alloc(), "web", at(TaskEventType.SetupFailure, "no such Secret", t0), InstantSource.system());
            recorder.record(alloc(), "web", at(TaskEventType.Killed, "Killed", t0), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 2);
            ticks.addAndGet(EventFolds.QUIET.toNanos());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 3);
        }
        assertThat(sink.created())
                .extracting(e -> e.getType() + " " + e.getReason() + " " + e.getMessage())
                .containsExactly(
                        "Normal TaskSetup Received, TaskSetup: task web",
                        "Warning SetupFailure Task web: no such Secret",
                        "Normal Killed Task web: Killed");
    }

    @Test
    void aFoldSpendsOneOfItsAllocationsEventsHoweverManyTaskEventsItHolds() {
        RecordedEvents sink = new RecordedEvents();
        try (EventRecorder recorder = folding(sink)) {
            for (int i = 0; i < 10 * EventRecorder.PER_ALLOCATION.burst(); i++) {
                recorder.record(alloc(), "web", restarting(), InstantSource.system());
            }
            recorder.record(alloc(), "web", event(TaskEventType.DriverFailure, "gone", null), InstantSource.system());
            await().atMost(Duration.ofSeconds(10)).until(() -> recorder.written() == 2);
            assertThat(recorder.dropped()).isZero();
        }
        assertThat(sink.created())
                .extracting(Event::getMessage)
                .containsExactly(
                        "Restarting (" + EventFolds.ENTRIES + " times): task web; and "
                                + (10 * EventRecorder.PER_ALLOCATION.burst() - EventFolds.ENTRIES)
                                + " more task events",
                        "Task web: gone");
    }

    @Test
    void foldsNotWrittenWhenTheRecorderClosesAreCountedDropped() {
        EventRecorder recorder = folding(new RecordedEvents());
        recorder.record(alloc(), "web", restarting(), InstantSource.system());
        recorder.record(owner(2), "web", restarting(), InstantSource.system());
        recorder.close();
        assertThat(recorder.written()).isZero();
        assertThat(recorder.dropped()).isEqualTo(2);
    }

    static Allocation owner(int i) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("a" + i)
                .withNamespace("default")
                .withUid("uid-" + i)
                .build());
        return a;
    }

    /** The queue held 10 000 Events whatever their size; it is bounded in characters too. */
    @Test
    void theQueueIsBoundedInCharactersNotOnlyInEntries() throws Exception {
        try (EventRecorder events = new EventRecorder(new RecordedEvents(), "node-a", new EventRate(0.001, 1))) {
            int offered = 3_000; // well under the 10 000 entries, each message cut to 1 024 characters
            for (int i = 0; i < offered; i++) {
                events.recordForAllocation(owner(i), true, "FailedValidation", "x".repeat(100_000), Instant.EPOCH);
            }
            long kept = offered - events.dropped();
            assertThat(kept * EventRecorder.MESSAGE_LIMIT)
                    .as("characters queued")
                    .isLessThanOrEqualTo(EventRecorder.QUEUE_CHARS + EventRecorder.MESSAGE_LIMIT);
            assertThat(events.dropped()).isPositive();
        }
    }

    @Test
    void oneAllocationGetsItsShareAndNoMore() throws Exception {
        try (EventRecorder events = new EventRecorder(new RecordedEvents(), "node-a", new EventRate(0.001, 1))) {
            for (int i = 0; i < 1_000; i++) {
                events.recordForAllocation(owner(0), false, "Restarting", "again", Instant.EPOCH);
            }
            assertThat(events.dropped())
                    .as("past its burst of %d", EventRecorder.PER_ALLOCATION.burst())
                    .isBetween(
                            1_000L - EventRecorder.PER_ALLOCATION.burst() - 5,
                            1_000L - EventRecorder.PER_ALLOCATION.burst());
            events.recordForAllocation(owner(1), false, "Started", "another allocation", Instant.EPOCH);
            assertThat(events.dropped())
                    .as("another allocation is not held back")
                    .isLessThanOrEqualTo(1_000L - EventRecorder.PER_ALLOCATION.burst());
        }
    }

    @Test
    void anEventOfAnAllocationWithALongNameHasANameARealServerTakes() {
        for (String name : List.of("a".repeat(235) + "-b" + "c".repeat(16), "a".repeat(235) + ".b", "a".repeat(253))) {
            Allocation owner = new Allocation();
            owner.setMetadata(new ObjectMetaBuilder()
                    .withName(name)
                    .withNamespace("default")
                    .withUid("u")
                    .build());
            String event = new EventRecorder.Pending(owner, "Normal", "Started", "started", Instant.EPOCH).name("1");
            assertThat(event)
                    .as("an RFC 1123 subdomain of at most 253 characters")
                    .hasSizeLessThanOrEqualTo(253)
                    .matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
        }
    }
}
