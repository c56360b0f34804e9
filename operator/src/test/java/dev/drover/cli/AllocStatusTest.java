package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.AllocatedDevice;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.ClientStatus;
import dev.drover.api.v1alpha1.Lifecycle;
import dev.drover.api.v1alpha1.LifecycleHook;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.api.v1alpha1.TaskState;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.EventListBuilder;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** What {@code kubectl drover status} shows a user, from the allocation and its Kubernetes Events. */
class AllocStatusTest {

    static final Instant NOW = Instant.parse("2026-11-22T10:03:12Z");
    static final Instant CREATED = Instant.parse("2026-11-22T10:00:00Z");

    // ---- what the allocation looks like

    static Task task(String name) {
        Task t = new Task();
        t.setName(name);
        t.setDriver("mock");
        return t;
    }

    static Task hooked(String name, LifecycleHook hook, boolean sidecar) {
        Task t = task(name);
        t.setLifecycle(new Lifecycle(hook, sidecar ? true : null));
        return t;
    }

    static Task leader(String name) {
        Task t = task(name);
        t.setLeader(true);
        return t;
    }

    static TaskEvent event(TaskEventType type, String time, String message) {
        return TaskEvent.of(type, Instant.parse(time)).withMessage(message);
    }

    static TaskState state(TaskState.State s, TaskEvent... events) {
        TaskState ts = new TaskState();
        ts.setState(s);
        ts.setEvents(new ArrayList<>(List.of(events)));
        return ts;
    }

    static Allocation allocation(List<Task> tasks, AllocationStatus status) {
        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web-1")
                .withNamespace("default")
                .withUid("4f1c2a7e-0000-4000-8000-000000000001")
                .withGeneration(1L)
                .withCreationTimestamp(CREATED.toString())
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setNodeName("node-a");
        spec.setTasks(tasks);
        a.setSpec(spec);
        a.setStatus(status);
        return a;
    }

    /** A running two-task allocation with a GPU, as the agent reports one. */
    static Allocation running() {
        AllocationStatus s = new AllocationStatus();
        s.setClientStatus(ClientStatus.Running);
        s.setClientDescription("Tasks are running");
        s.setObservedGeneration(1L);
        s.setReady("2/2");
        s.setConditions(List.of(new ConditionBuilder()
                .withType("Ready")
                .withStatus("True")
                .withReason("TasksRunning")
                .withMessage("Tasks are running")
                .build()));
        s.setAllocatedDevices(
                List.of(new AllocatedDevice("web", "nvidia", "gpu", "Tesla T4", List.of("GPU-0", "GPU-1"))));
        TaskState web = state(
                TaskState.State.Running,
                event(TaskEventType.Received, "2026-11-22T10:00:00.100Z", "Task received by client"),
                event(TaskEventType.TaskSetup, "2026-11-22T10:00:00.200Z", "Building Task Directory"),
                event(TaskEventType.Started, "2026-11-22T10:00:01.300Z", "Task started by client"),
                event(TaskEventType.Terminated, "2026-11-22T10:02:31Z", "Exit Code: 1")
                        .withExit(1, null),
                TaskEvent.of(TaskEventType.Restarting, Instant.parse("2026-11-22T10:02:31.500Z"))
                        .withMessage("Restart within policy")
                        .withRestartReason("Restart within policy")
                        .withStartDelay(Duration.ofSeconds(15)),
                event(TaskEventType.Started, "2026-11-22T10:02:32Z", "Task started by client"));
        web.setRestarts(1);
        web.setLastRestart("2026-11-22T10:02:31.500Z");
        web.setStartedAt("2026-11-22T10:02:32Z");
        TaskState init = state(
                TaskState.State.Dead,
                event(TaskEventType.Started, "2026-11-22T10:00:00.500Z", "Task started by client"),
                event(TaskEventType.Terminated, "2026-11-22T10:00:00.900Z", "Exit Code: 0")
                        .withExit(0, null));
        init.setFailed(false);
        init.setRestarts(0);
        init.setStartedAt("2026-11-22T10:00:00.500Z");
        init.setFinishedAt("2026-11-22T10:00:00.900Z");
        TaskState sidecar = state(
                TaskState.State.Running,
                event(TaskEventType.Started, "2026-11-22T10:00:01.500Z", "Task started by client"));
        sidecar.setStartedAt("2026-11-22T10:00:01.500Z");
        Map<String, TaskState> states = new LinkedHashMap<>();
        // the agent's map order is not the spec's: the output follows the spec
        states.put("logs", sidecar);
        states.put("web", web);
        states.put("init", init);
        s.setTaskStates(states);
        return allocation(
                List.of(
                        hooked("init", LifecycleHook.Prestart, false),
                        leader("web"),
                        hooked("logs", LifecycleHook.Poststart, true),
                        task("worker"),
                        hooked("cleanup", LifecycleHook.Poststop, false)),
                s);
    }

    static Event kubeEvent(String name, String type, String reason, String message, String lastTimestamp) {
        return new EventBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("default")
                .endMetadata()
                .withNewInvolvedObject()
                .withKind("Allocation")
                .withName("web-1")
                .withUid("4f1c2a7e-0000-4000-8000-000000000001")
                .endInvolvedObject()
                .withType(type)
                .withReason(reason)
                .withMessage(message)
                .withFirstTimestamp(lastTimestamp)
                .withLastTimestamp(lastTimestamp)
                .withCount(1)
                .build();
    }

    static List<String> lines(String text) {
        return text.lines().toList();
    }

    /** The lines of one block: from the line starting with {@code first} up to the next blank line. */
    static List<String> block(String text, String first) {
        List<String> all = lines(text);
        int start = all.indexOf(
                all.stream().filter(l -> l.startsWith(first)).findFirst().orElseThrow());
        int end = start;
        while (end < all.size() && !all.get(end).isBlank()) {
            end++;
        }
        return all.subList(start, end);
    }

    // ---- the formatter

    @Test
    void headerShowsWhatTheAgentReportsAligned() {
        String out = AllocStatus.render(running(), List.of(), NOW);

        assertThat(block(out, "Name"))
                .containsExactly(
                        "Name               = web-1",
                        "Namespace          = default",
                        "UID                = 4f1c2a7e-0000-4000-8000-000000000001",
                        "Node               = node-a",
                        "Type               = Service",
                        "Client Status      = Running",
                        "Client Description = Tasks are running",
                        "Desired Status     = Run",
                        "Ready              = True, 2/2 main tasks running",
                        "Created            = 3m12s ago",
                        "Devices            = web: nvidia/gpu/Tesla T4 [GPU-0, GPU-1]");
    }

    @Test
    void readyAddsTheConditionsMessageWhenItSaysMoreThanTheDescription() {
        Allocation a = running();
        a.getStatus().setReady("1/2");
        a.getStatus()
                .setConditions(List.of(new ConditionBuilder()
                        .withType("Ready")
                        .withStatus("False")
                        .withReason("Running")
                        .withMessage("waiting for task db")
                        .build()));

        assertThat(AllocStatus.render(a, List.of(), NOW))
                .contains("Ready              = False, 1/2 main tasks running (waiting for task db)\n");
    }

    @Test
    void tasksFollowTheSpecOrderWithTheirRoleAndState() {
        String out = AllocStatus.render(running(), List.of(), NOW);

        assertThat(lines(out).stream().filter(l -> l.startsWith("Task \"")))
                .containsExactly(
                        "Task \"init\" (prestart) is \"Dead\"",
                        "Task \"web\" (leader) is \"Running\"",
                        "Task \"logs\" (poststart sidecar) is \"Running\"",
                        "Task \"worker\" is \"Pending\"",
                        "Task \"cleanup\" (poststop) is \"Pending\"");
        assertThat(block(out, "Task \"web\""))
                .element(1)
                .isEqualTo("Restarts = 1, Last Restart = 40s ago, Started = 40s ago");
        assertThat(block(out, "Task \"init\""))
                .element(1)
                .isEqualTo("Restarts = 0, Started = 3m11s ago, Finished = 3m11s ago");
    }

    @Test
    void taskEventsAreNewestFirstWithTheDetailsTheMessageLacks() {
        String out = AllocStatus.render(running(), List.of(), NOW);

        assertThat(block(out, "Task \"web\""))
                .containsExactly(
                        "Task \"web\" (leader) is \"Running\"",
                        "Restarts = 1, Last Restart = 40s ago, Started = 40s ago",
                        "Recent Events:",
                        "Time                  Type        Description",
                        "2026-11-22T10:02:32Z  Started     Task started by client",
                        "2026-11-22T10:02:31Z  Restarting  Restart within policy, Restart Delay: 15s",
                        "2026-11-22T10:02:31Z  Terminated  Exit Code: 1",
                        "2026-11-22T10:00:01Z  Started     Task started by client",
                        "2026-11-22T10:00:00Z  TaskSetup   Building Task Directory",
                        "2026-11-22T10:00:00Z  Received    Task received by client");
    }

    @Test
    void aTasksChecksShowTheirStatusSinceWhenAndWhatTheProbeSaid() {
        Allocation a = running();
        a.getStatus()
                .getTaskStates()
                .get("web")
                .setChecks(List.of(
                        new CheckStatus(
                                "http",
                                CheckStatus.Status.CRITICAL,
                                "HTTP 503:\u001b[31m down",
                                "2026-11-22T10:03:00Z"),
                        new CheckStatus("tcp", CheckStatus.Status.PASSING, "", "2026-11-22T10:02:40Z")));

        assertThat(block(AllocStatus.render(a, List.of(), NOW), "Task \"web\""))
                .startsWith(
                        "Task \"web\" (leader) is \"Running\"",
                        "Restarts = 1, Last Restart = 40s ago, Started = 40s ago",
                        "Checks:",
                        "Check  Status    Since    Output",
                        "http   critical  12s ago  HTTP 503:\\u001B[31m down",
                        "tcp    passing   32s ago  <none>",
                        "Recent Events:");
    }

    @Test
    void aTaskTheAgentHasNotReportedIsPendingWithNoEvents() {
        String out = AllocStatus.render(running(), List.of(), NOW);

        assertThat(block(out, "Task \"worker\"")).containsExactly("Task \"worker\" is \"Pending\"", "No events yet");
    }

    @Test
    void aFailedTaskSaysSo() {
        TaskState dead = state(
                TaskState.State.Dead,
                TaskEvent.of(TaskEventType.NotRestarting, Instant.parse("2026-11-22T10:01:00Z"))
                        .withRestartReason("Error was unrecoverable"));
        dead.setFailed(true);
        Allocation a = allocation(List.of(task("web")), new AllocationStatus());
        a.getStatus().getTaskStates().put("web", dead);

        String out = AllocStatus.render(a, List.of(), NOW);

        assertThat(out)
                .contains(
                        "Task \"web\" is \"Dead\" (failed)",
                        "2026-11-22T10:01:00Z  NotRestarting  Restart Reason: Error was unrecoverable");
    }

    @Test
    void describingAnEventAddsOnlyWhatItsMessageDoesNotSay() {
        assertThat(AllocStatus.describe(TaskEvent.of(TaskEventType.Terminated, NOW)
                        .withMessage("OOM killed")
                        .withExit(137, "SIGKILL")))
                .isEqualTo("OOM killed, Exit Code: 137, Signal: SIGKILL");
        assertThat(AllocStatus.describe(TaskEvent.of(TaskEventType.Terminated, NOW)
                        .withMessage("Exit Code: 1")
                        .withExit(1, null)))
                .isEqualTo("Exit Code: 1");
        assertThat(AllocStatus.describe(TaskEvent.of(TaskEventType.Terminated, NOW)
                        .withMessage("Exit Code: 12, took 1s")
                        .withExit(1, null)))
                .as("12 is not 1")
                .isEqualTo("Exit Code: 12, took 1s, Exit Code: 1");
        assertThat(AllocStatus.describe(
                        TaskEvent.of(TaskEventType.DriverFailure, NOW).withDriverError("internal error: boom")))
                .isEqualTo("Driver Error: internal error: boom");
        assertThat(AllocStatus.describe(TaskEvent.of(TaskEventType.Killing, NOW)
                        .withKillTimeout(Duration.ofSeconds(5))
                        .withMessage("Sent interrupt. Waiting 5s before force killing")))
                .isEqualTo("Sent interrupt. Waiting 5s before force killing");
        assertThat(AllocStatus.describe(
                        TaskEvent.of(TaskEventType.SiblingTaskFailed, NOW).withFailedSibling("db")))
                .isEqualTo("Failed Sibling: db");
        assertThat(AllocStatus.describe(TaskEvent.of(TaskEventType.LeaderTaskDead, NOW)))
                .isEmpty();
    }

    @Test
    void anAllocationTheAgentHasNotSeenSaysSo() {
        Allocation a = allocation(List.of(task("web"), task("db")), null);

        String out = AllocStatus.render(a, List.of(), NOW);

        assertThat(out)
                .contains(
                        "Client Status  = (not yet taken on by the node's agent: it may be waiting for a start slot, or not running)\n")
                .doesNotContain("Client Description", "Ready");
        assertThat(block(out, "Task \"web\"")).containsExactly("Task \"web\" is \"Pending\"", "No events yet");
        assertThat(block(out, "Task \"db\"")).containsExactly("Task \"db\" is \"Pending\"", "No events yet");
    }

    @Test
    void anAllocationBeingDeletedSaysSo() {
        Allocation a = running();
        a.getMetadata().setDeletionTimestamp("2026-11-22T10:03:00Z");

        String out = AllocStatus.render(a, List.of(), NOW);

        assertThat(out)
                .contains("Deleting           = requested 12s ago; waiting for the node's agent to stop its"
                        + " tasks and remove its files\n");
    }

    @Test
    void aSpecTheAgentHasNotActedOnYetShowsBothGenerations() {
        Allocation a = running();
        a.getMetadata().setGeneration(3L);

        assertThat(AllocStatus.render(a, List.of(), NOW)).contains("= 3 (the agent has acted on 1 so far)\n");
        assertThat(AllocStatus.render(running(), List.of(), NOW)).doesNotContain("Generation");
    }

    @Test
    void aTaskTheSpecNoLongerHasIsShownAfterTheOthers() {
        Allocation a = running();
        a.getStatus().getTaskStates().put("old", state(TaskState.State.Dead));

        List<String> tasks = lines(AllocStatus.render(a, List.of(), NOW)).stream()
                .filter(l -> l.startsWith("Task \""))
                .toList();

        assertThat(tasks).last().isEqualTo("Task \"old\" (no longer in the spec) is \"Dead\"");
    }

    @Test
    void durationsAreHumanized() {
        assertThat(TerminalText.ago(NOW.minusSeconds(40), NOW)).isEqualTo("40s ago");
        assertThat(TerminalText.ago(NOW.minusSeconds(3 * 60 + 12), NOW)).isEqualTo("3m12s ago");
        assertThat(TerminalText.ago(NOW.minus(Duration.ofHours(2).plusMinutes(5).plusSeconds(9)), NOW))
                .isEqualTo("2h5m ago");
        assertThat(TerminalText.ago(NOW.minus(Duration.ofDays(4).plusHours(3).plusMinutes(7)), NOW))
                .isEqualTo("4d3h ago");
        assertThat(TerminalText.ago(NOW.minus(Duration.ofHours(5)), NOW)).isEqualTo("5h ago");
        assertThat(TerminalText.ago(NOW, NOW)).isEqualTo("0s ago");
        assertThat(TerminalText.ago(NOW.plusSeconds(5), NOW))
                .as("a clock ahead of ours")
                .isEqualTo("in 5s");
    }

    @Test
    void hostileTextIsEscapedAndCut() {
        String hostile = "\u001B]0;pwned\u0007\u001B[2J\r\nfake line\u202Egnp.exe\u009B31m" + "x".repeat(1000);
        Allocation a = running();
        a.getStatus().setClientDescription(hostile);
        a.getStatus()
                .getTaskStates()
                .get("web")
                .getEvents()
                .add(TaskEvent.of(TaskEventType.Terminated, NOW).withMessage(hostile));
        Event k = kubeEvent("e", "Warning\u001B[5m", "Bad\nReason", hostile, "2026-11-22T10:03:00Z");

        String out = AllocStatus.render(a, List.of(k), NOW);

        assertThat(out.chars()
                        .filter(c -> c != '\n')
                        .filter(c -> Character.isISOControl(c) || Character.getType(c) == Character.FORMAT))
                .as("no control or format character reaches the terminal")
                .isEmpty();
        String shown = "\\u001B]0;pwned\\u0007\\u001B[2J\\r\\nfake line\\u202Egnp.exe\\u009B31mxxx";
        assertThat(out)
                .contains("Client Description = " + shown, "Terminated  " + shown, "Warning\\u001B[5m", "Bad\\nReason")
                .doesNotContain("fake line\n");
        String description = lines(out).stream()
                .filter(l -> l.startsWith("Client Description"))
                .findFirst()
                .orElseThrow()
                .substring("Client Description = ".length());
        assertThat(description).hasSize(TerminalText.MAX).endsWith("x…");
    }

    @Test
    void cuttingNeverSplitsAnEscapeAndLeavesShortTextAlone() {
        assertThat(TerminalText.clean("x".repeat(TerminalText.MAX))).isEqualTo("x".repeat(TerminalText.MAX));
        assertThat(TerminalText.clean("x".repeat(TerminalText.MAX - 3) + "\u0007y"))
                .isEqualTo("x".repeat(TerminalText.MAX - 3) + "…");
        assertThat(TerminalText.clean("tab\there")).isEqualTo("tab\\there");
        assertThat(TerminalText.clean("日本語 ✓ 🚀")).isEqualTo("日本語 ✓ 🚀");
        assertThat(TerminalText.clean(null)).isEqualTo("<none>");
    }

    @Test
    void missingFieldsDoNotCrash() {
        assertThat(AllocStatus.render(new Allocation(), null, NOW))
                .contains(
                        "Name           = <none>",
                        "Client Status  = (not yet taken on by the node's agent: it may be waiting for a start slot, or not running)",
                        "Created        = <none>",
                        "Events:");
        assertThat(AllocStatus.render(allocation(Arrays.asList(new Task()), null), List.of(), NOW))
                .contains("Task \"<none>\" is \"Pending\"");

        Allocation a = new Allocation();
        a.setMetadata(new ObjectMetaBuilder()
                .withName("web-1")
                .withCreationTimestamp("yesterday")
                .build());
        AllocationSpec spec = new AllocationSpec();
        spec.setTasks(Arrays.asList(task("web"), null, new Task()));
        a.setSpec(spec);
        AllocationStatus s = new AllocationStatus();
        s.setTaskStates(null);
        s.setConditions(Arrays.asList(null, new Condition()));
        s.setAllocatedDevices(Arrays.asList(new AllocatedDevice(), null));
        a.setStatus(s);
        TaskState empty = new TaskState();
        empty.setEvents(Arrays.asList(new TaskEvent(), null));
        a.getStatus().setTaskStates(new LinkedHashMap<>(Map.of("web", empty)));
        Event blank = new Event();
        Event noTimes = new EventBuilder().withReason("Odd").withCount(null).build();

        String out = AllocStatus.render(a, Arrays.asList(blank, null, noTimes), NOW);

        assertThat(out)
                .contains(
                        "Client Status      = <none>",
                        "Created            = yesterday",
                        "Devices            = <none>: <none>",
                        "Task \"web\" is \"Unknown\"",
                        "Restarts = 0",
                        "<none>  <none>",
                        "Task \"<none>\" is \"Pending\"",
                        "<none>  <none>  Odd     <none>");
    }

    @Test
    void kubernetesEventsAreNewestFirstAndAtMostTen() {
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < 13; i++) {
            events.add(kubeEvent(
                    "e" + i,
                    "Normal",
                    "Started",
                    "Task web: start " + i,
                    Instant.parse("2026-11-22T10:00:00Z").plusSeconds(i).toString()));
        }
        // newer-style Events carry only eventTime; older ones only firstTimestamp
        Event micro = kubeEvent("micro", "Warning", "NotRestarting", "Task web: gave up", null);
        micro.setEventTime(new MicroTime("2026-11-22T10:02:00.123456Z"));
        Event first = kubeEvent("first", "Normal", "Received", "Task web: received", null);
        first.setFirstTimestamp("2026-11-22T09:00:00Z");
        events.add(micro);
        events.add(first);
        Collections.shuffle(events, new Random(7));

        List<String> section = block(AllocStatus.render(running(), events, NOW), "Events:");

        assertThat(section).hasSize(1 + 1 + 10 + 1);
        assertThat(section.subList(0, 4))
                .containsExactly(
                        "Events:",
                        "Time                  Type     Reason         Message",
                        "2026-11-22T10:02:00Z  Warning  NotRestarting  Task web: gave up",
                        "2026-11-22T10:00:12Z  Normal   Started        Task web: start 12");
        assertThat(section.get(11)).endsWith("Task web: start 4");
        assertThat(section.getLast())
                .isEqualTo("(5 older not shown: kubectl get events -n default"
                        + " --field-selector involvedObject.name=web-1)");
    }

    @Test
    void aCountColumnAppearsOnlyWhenAnEventRepeated() {
        Event once = kubeEvent("a", "Normal", "Started", "Task web: started", "2026-11-22T10:00:01Z");
        Event often = kubeEvent("b", "Warning", "Terminated", "Task web: Exit Code: 1", "2026-11-22T10:02:31Z");
        often.setCount(4);

        assertThat(block(AllocStatus.render(running(), List.of(once, often), NOW), "Events:"))
                .containsExactly(
                        "Events:",
                        "Time                  Type     Reason      Count  Message",
                        "2026-11-22T10:02:31Z  Warning  Terminated  4      Task web: Exit Code: 1",
                        "2026-11-22T10:00:01Z  Normal   Started     1      Task web: started");
        assertThat(block(AllocStatus.render(running(), List.of(once), NOW), "Events:"))
                .containsExactly(
                        "Events:",
                        "Time                  Type    Reason   Message",
                        "2026-11-22T10:00:01Z  Normal  Started  Task web: started");
    }

    @Test
    void noKubernetesEventsSaysWhyThereMayBeNone() {
        assertThat(AllocStatus.render(running(), List.of(), NOW))
                .endsWith("Events:\nNone (the API server keeps Events for an hour by default)\n");
    }

    // ---- run, against a mock API server

    static final String ALLOC_PATH = "/apis/drover.dev/v1alpha1/namespaces/default/allocations/web-1";
    static final String EVENTS_PATH = "/api/v1/namespaces/default/events?fieldSelector="
            + URLEncoder.encode("involvedObject.kind=Allocation,involvedObject.name=web-1", StandardCharsets.UTF_8);

    /** A mock API server that lists Events only for the selector {@code kubectl drover status} must send. */
    static KubernetesMockServer server(List<Event> events) {
        KubernetesMockServer server = new KubernetesMockServer(false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        server.expect()
                .get()
                .withPath(EVENTS_PATH)
                .andReturn(200, new EventListBuilder().withItems(events).build())
                .always();
        return server;
    }

    static String run(KubernetesMockServer server, String namespace) throws CommandFailure {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (KubernetesClient client = server.createClient(new JdkHttpClientFactory())) {
            AllocStatus.run(
                    client,
                    "web-1",
                    namespace,
                    InstantSource.fixed(NOW),
                    new PrintStream(bytes, true, StandardCharsets.UTF_8));
        } finally {
            server.destroy();
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    @Test
    void runPrintsTheAllocationWithOnlyItsOwnEvents() throws Exception {
        Event mine = kubeEvent("mine", "Normal", "Started", "Task web: started", "2026-11-22T10:00:01Z");
        Event predecessors = kubeEvent("old", "Warning", "Terminated", "Task web: from before", "2026-11-22T09:00:00Z");
        predecessors.getInvolvedObject().setUid("an-earlier-web-1");
        KubernetesMockServer server = server(List.of(mine, predecessors));
        server.expect().get().withPath(ALLOC_PATH).andReturn(200, running()).always();

        String out = run(server, "default");

        assertThat(out).isEqualTo(AllocStatus.render(running(), List.of(mine), NOW));
        assertThat(out).contains("Task web: started").doesNotContain("from before");
    }

    @Test
    void runSaysWhenTheAllocationIsNotFound() {
        KubernetesMockServer server = server(List.of());

        assertThatThrownBy(() -> run(server, "default"))
                .isInstanceOf(CommandFailure.class)
                .hasMessage("allocation default/web-1 not found");
    }

    @Test
    void runPassesOnWhatTheApiServerSaid() {
        KubernetesMockServer server = server(List.of());
        server.expect()
                .get()
                .withPath(ALLOC_PATH)
                .andReturn(
                        403,
                        new StatusBuilder()
                                .withCode(403)
                                .withReason("Forbidden")
                                .withMessage("allocations.drover.dev \"web-1\" is forbidden")
                                .build())
                .always();

        assertThatThrownBy(() -> run(server, "default"))
                .isInstanceOf(CommandFailure.class)
                .hasMessage("allocations.drover.dev \"web-1\" is forbidden (HTTP 403)")
                .extracting(e -> ((CommandFailure) e).httpCode())
                .isEqualTo(403);
    }

    @Test
    void runShowsTheStatusWhenEventsMayNotBeListed() throws Exception {
        KubernetesMockServer server = new KubernetesMockServer(false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        server.expect().get().withPath(ALLOC_PATH).andReturn(200, running()).always();
        server.expect()
                .get()
                .withPath(EVENTS_PATH)
                .andReturn(
                        403,
                        new StatusBuilder()
                                .withCode(403)
                                .withReason("Forbidden")
                                .withMessage("events is forbidden")
                                .build())
                .always();

        String out = run(server, "default");

        assertThat(out)
                .contains("Client Status      = Running")
                .endsWith("Events:\nNot shown: you may not list Events in namespace default\n");
    }
}
