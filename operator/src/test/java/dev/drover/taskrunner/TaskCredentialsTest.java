package dev.drover.taskrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.Task;
import dev.drover.api.v1alpha1.TaskEvent;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.credentials.CredentialException;
import dev.drover.credentials.ObjectRef;
import dev.drover.driver.TaskConfig;
import dev.drover.state.AllocId;
import dev.drover.taskrunner.identity.TaskCredentials;
import dev.drover.taskrunner.identity.WorkloadIdentity;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A task's credentials against a fake API server, written into a real task directory: what a task finds before it
 * starts, what it gets while it runs, and what a user reads when something is missing or refused.
 */
class TaskCredentialsTest {

    static final AllocId ALLOC = new AllocId("team", "a");
    static final String CANARY = "canary-s3cr3t-value";

    @TempDir
    Path tmp;

    Path taskDir;
    final FakeCredentials api = new FakeCredentials();
    final List<TaskEvent> events = new CopyOnWriteArrayList<>();
    final List<String> actions = new CopyOnWriteArrayList<>();
    TaskCredentials credentials;

    final RunningTask running = new RunningTask() {
        @Override
        public Task task() {
            throw new UnsupportedOperationException("credentials know their task");
        }

        @Override
        public void restart(String reason) {
            actions.add("restart: " + reason);
        }

        @Override
        public void signal(String signal, String reason) {
            actions.add(signal + ": " + reason);
        }

        @Override
        public void restartFailing(String reason) {
            actions.add("restart counted: " + reason);
        }

        @Override
        public dev.drover.driver.ExecProcess exec(dev.drover.driver.ExecRequest request) {
            throw new UnsupportedOperationException("credentials run no commands in the task");
        }

        @Override
        public void checks(List<dev.drover.api.v1alpha1.CheckStatus> checks, TaskEvent event) {
            throw new UnsupportedOperationException("credentials report no checks");
        }

        @Override
        public void event(TaskEvent e) {
            events.add(e);
        }
    };

    @BeforeEach
    void taskDirectory() throws Exception {
        taskDir = tmp.resolve("allocs/team/a/web");
        Files.createDirectories(taskDir.resolve("local"));
        Files.createDirectories(taskDir.resolve("secrets"));
        Files.setPosixFilePermissions(taskDir.resolve("secrets"), PosixFilePermissions.fromString("rwx------"));
        api.put(ObjectRef.Kind.Secret, "db", Map.of("password", CANARY, "user", "app"));
        api.put(ObjectRef.Kind.ConfigMap, "app", Map.of("mode", "fast", "app.yaml", "a: 1\n"));
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (credentials != null) {
            credentials.stopped();
        }
    }

    static AllocationSpec spec(String yaml) {
        return Serialization.unmarshal(
                        "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: a, namespace: team}\n"
                                + "spec:\n  nodeName: n\n" + yaml.indent(2),
                        Allocation.class)
                .getSpec();
    }

    TaskHookContext prestart(AllocationSpec spec, Duration poll) throws TaskHookException {
        Task task = spec.getTasks().get(0);
        credentials = TaskCredentials.of(WorkloadIdentity.of(api, poll, Clock.systemUTC()), ALLOC, spec, task, taskDir);
        TaskHookContext ctx = new TaskHookContext(ALLOC, task, spec, template(), Clock.systemUTC(), events::add);
        credentials.prestart(ctx);
        return ctx;
    }

    TaskConfig template() {
        return new TaskConfig(
                "team",
                "a",
                "web",
                Map.of(),
                Map.of(),
                tmp.resolve("allocs/team/a/alloc"),
                taskDir,
                tmp.resolve("logs"),
                taskDir.resolve("secrets"));
    }

    String read(String path) throws Exception {
        return Files.readString(taskDir.resolve(path));
    }

    @Test
    void aTaskStartsWithItsTokenItsVariablesAndItsFiles() throws Exception {
        AllocationSpec spec = spec("""
                serviceAccountName: web
                tasks:
                - name: web
                  driver: mock
                  env:
                  - {name: PLAIN, value: x}
                  - {name: DB_PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}
                  - {name: MODE, valueFrom: {configMapKeyRef: {name: app, key: mode}}}
                  files:
                  - {secret: db}
                  - {configMap: app, items: [{key: app.yaml, path: conf/app.yaml, mode: 0644}]}
                """);
        TaskHookContext ctx = prestart(spec, Duration.ofMinutes(1));

        assertThat(read("secrets/token")).isEqualTo("token-1");
        assertThat(Files.getPosixFilePermissions(taskDir.resolve("secrets/token")))
                .isEqualTo(PosixFilePermissions.fromString("rw-------"));
        assertThat(ctx.env())
                .containsEntry(
                        "DROVER_TOKEN_PATH", taskDir.resolve("secrets/token").toString());
        assertThat(ctx.task().effectiveEnv(ctx.valuesFrom()))
                .containsExactly(Map.entry("PLAIN", "x"), Map.entry("DB_PASSWORD", CANARY), Map.entry("MODE", "fast"));
        assertThat(read("secrets/db/password")).isEqualTo(CANARY);
        assertThat(read("secrets/db/user")).isEqualTo("app");
        assertThat(Files.getPosixFilePermissions(taskDir.resolve("secrets/db/password")))
                .isEqualTo(PosixFilePermissions.fromString("r--------"));
        assertThat(read("local/app/conf/app.yaml")).isEqualTo("a: 1\n");
        assertThat(Files.exists(taskDir.resolve("local/app/mode"))).isFalse();
        // one token for the file and the reads (same audience and life), each object read once
        assertThat(api.tokenRequests).containsExactly("team/web/null/3600");
        assertThat(api.reads.get()).isEqualTo(2);
    }

    @Test
    void aMissingObjectOrKeyFailsSetupNamingItUnlessOptional() throws Exception {
        assertThatThrownBy(() -> prestart(
                        spec("tasks: [{name: web, driver: mock, env: [{name: K, valueFrom: {secretKeyRef: {name: gone,"
                                + " key: k}}}]}]"),
                        Duration.ofMinutes(1)))
                .isInstanceOf(TaskHookException.class)
                .hasMessage("Secret team/gone was not found (variable K); create it, or mark the reference optional")
                .extracting(e -> ((TaskHookException) e).eventType())
                .isEqualTo(TaskEventType.SetupFailure);
        assertThatThrownBy(() -> prestart(
                        spec(
                                "tasks: [{name: web, driver: mock, files: [{secret: db, items: [{key: nope, path: x}]}]}]"),
                        Duration.ofMinutes(1)))
                .hasMessage("key nope is not in Secret team/db (files in secrets/db); add it, or mark the entry"
                        + " optional");

        TaskHookContext ctx = prestart(spec("""
                        tasks:
                        - name: web
                          driver: mock
                          env:
                          - {name: K, valueFrom: {secretKeyRef: {name: gone, key: k, optional: true}}}
                          - {name: L, valueFrom: {secretKeyRef: {name: db, key: nope, optional: true}}}
                          files: [{configMap: gone, optional: true}]
                        """), Duration.ofMinutes(1));
        assertThat(ctx.task().effectiveEnv(ctx.valuesFrom())).isEmpty();
        assertThat(Files.exists(taskDir.resolve("local/gone"))).isTrue();
        assertThat(Files.list(taskDir.resolve("local/gone"))
                        .map(p -> p.getFileName().toString()))
                .allMatch(name -> name.startsWith(".."));
    }

    @Test
    void aRefusedObjectFailsSetupWithTheApiServersReasonEvenWhenOptional() {
        api.forbidden.add(new ObjectRef(ObjectRef.Kind.Secret, "team", "db"));
        assertThatThrownBy(() -> prestart(
                        spec("tasks: [{name: web, driver: mock, files: [{secret: db, optional: true}]}]"),
                        Duration.ofMinutes(1)))
                .isInstanceOf(TaskHookException.class)
                .hasMessage("cannot read Secret team/db (files in secrets/db): secrets \"db\" is forbidden: User"
                        + " \"system:serviceaccount:team:web\" cannot get resource \"secrets\"");
    }

    @Test
    void aDefaultTokenTheApiServerRefusesIsDoneWithoutButAnAskedForOneFailsSetup() throws Exception {
        // the chart's policy as the API server words it: what to do comes last, and must not be cut
        String refusal = "cannot mint a token for ServiceAccount team/default: forbidden: ValidatingAdmissionPolicy"
                + " 'drover-agent-tokens' with binding 'drover-agent-tokens' denied request: the Drover agent may"
                + " request tokens only for ServiceAccounts in namespaces labelled drover.dev/workloads=enabled:"
                + " label namespace team drover.dev/workloads=enabled to let Drover run workloads with tokens there";
        api.tokenFailures.add(new CredentialException(CredentialException.Reason.FORBIDDEN, refusal));
        TaskHookContext ctx = prestart(spec("tasks: [{name: web, driver: mock}]"), Duration.ofMinutes(1));
        assertThat(ctx.env()).doesNotContainKey("DROVER_TOKEN_PATH");
        assertThat(Files.exists(taskDir.resolve("secrets/token"))).isFalse();
        assertThat(events)
                .extracting(TaskEvent::getType, TaskEvent::getMessage)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(
                        TaskEventType.TaskSetup,
                        "Starting without a ServiceAccount token: " + refusal
                                + " (set automountServiceAccountToken: false if the task needs none)"));

        // the next start (a restart) goes without it again, and says nothing new
        api.tokenFailures.add(new CredentialException(CredentialException.Reason.FORBIDDEN, refusal));
        credentials.prestart(new TaskHookContext(
                ALLOC,
                ctx.task(),
                spec("tasks: [{name: web, driver: mock}]"),
                template(),
                Clock.systemUTC(),
                events::add));
        assertThat(events).hasSize(1);

        api.tokenFailures.add(new CredentialException(CredentialException.Reason.FORBIDDEN, refusal));
        assertThatThrownBy(() -> prestart(
                        spec("automountServiceAccountToken: true\ntasks: [{name: web, driver: mock}]"),
                        Duration.ofMinutes(1)))
                .isInstanceOf(TaskHookException.class)
                .hasMessage(refusal);
    }

    @Test
    void noTokenIsAskedForWhenNoneIsWantedAndNothingIsRead() throws Exception {
        TaskHookContext ctx = prestart(
                spec("automountServiceAccountToken: false\ntasks: [{name: web, driver: mock}]"), Duration.ofMinutes(1));
        assertThat(ctx.env()).isEmpty();
        assertThat(api.tokenRequests).isEmpty();
        assertThat(Files.exists(taskDir.resolve("secrets/token"))).isFalse();
    }

    @Test
    void anUnreachableApiServerIsTriedAgainBeforeSetupFails() throws Exception {
        api.readFailures.add(new CredentialException(CredentialException.Reason.UNAVAILABLE, "connection refused"));
        TaskHookContext ctx = prestart(
                spec("tasks: [{name: web, driver: mock, env: [{name: P, valueFrom: {secretKeyRef: {name: db, key:"
                        + " password}}}]}]"),
                Duration.ofMinutes(1));
        assertThat(ctx.valuesFrom()).containsValue(CANARY);
    }

    @Test
    void theTokenIsRenewedAtFourFifthsOfItsLifeWhileTheTaskRuns() throws Exception {
        api.life = Duration.ofMillis(1500);
        prestart(spec("tasks: [{name: web, driver: mock}]"), Duration.ofMinutes(1));
        assertThat(read("secrets/token")).isEqualTo("token-1");
        credentials.running(running);
        await().atMost(Duration.ofSeconds(5)).until(() -> read("secrets/token").equals("token-2"));
        await().atMost(Duration.ofSeconds(5)).until(() -> read("secrets/token").equals("token-3"));
        assertThat(actions).isEmpty();
    }

    @Test
    void aChangedSecretUpdatesTheFilesInPlaceAndRestartsTheTaskOnce() throws Exception {
        prestart(spec("""
                        tasks:
                        - name: web
                          driver: mock
                          onChange: Restart
                          env: [{name: P, valueFrom: {secretKeyRef: {name: db, key: password}}}]
                          files: [{secret: db}]
                        """), Duration.ofMillis(100));
        credentials.running(running);
        api.put(ObjectRef.Kind.Secret, "db", Map.of("password", "rotated", "user", "app"));
        await().atMost(Duration.ofSeconds(5))
                .until(() -> read("secrets/db/password").equals("rotated"));
        await().atMost(Duration.ofSeconds(5)).until(() -> !actions.isEmpty());
        Thread.sleep(400); // several more polls: the same change asks for no second restart
        assertThat(actions)
                .containsExactly("restart: a Secret or ConfigMap it uses changed (files in secrets/db; variables P)");
        assertThat(String.join("\n", actions)).doesNotContain("rotated").doesNotContain(CANARY);
    }

    @Test
    void aChangedConfigMapSignalsTheTaskOrDoesNothingWithNoop() throws Exception {
        prestart(
                spec("tasks: [{name: web, driver: mock, onChange: Signal, changeSignal: SIGHUP,"
                        + " files: [{configMap: app}]}]"),
                Duration.ofMillis(100));
        credentials.running(running);
        api.put(ObjectRef.Kind.ConfigMap, "app", Map.of("mode", "slow", "app.yaml", "a: 2\n"));
        await().atMost(Duration.ofSeconds(5)).until(() -> !actions.isEmpty());
        assertThat(actions).containsExactly("SIGHUP: a Secret or ConfigMap it uses changed (files in local/app)");
        assertThat(read("local/app/mode")).isEqualTo("slow");
        credentials.stopped();

        actions.clear();
        prestart(spec("tasks: [{name: web, driver: mock, files: [{configMap: app}]}]"), Duration.ofMillis(100));
        credentials.running(running);
        api.put(ObjectRef.Kind.ConfigMap, "app", Map.of("mode", "noop", "app.yaml", "a: 3\n"));
        await().atMost(Duration.ofSeconds(5)).until(() -> read("local/app/mode").equals("noop"));
        assertThat(actions).isEmpty();
    }

    @Test
    void aFailedReadWhileRunningKeepsTheFilesAndIsReportedOnce() throws Exception {
        prestart(spec("tasks: [{name: web, driver: mock, files: [{secret: db}]}]"), Duration.ofMillis(100));
        api.forbidden.add(new ObjectRef(ObjectRef.Kind.Secret, "team", "db"));
        int before = api.reads.get();
        credentials.running(running);
        await().atMost(Duration.ofSeconds(5)).until(() -> api.reads.get() >= before + 4);
        assertThat(read("secrets/db/password")).isEqualTo(CANARY);
        assertThat(events)
                .filteredOn(e -> e.getType() == TaskEventType.CredentialRefreshFailed)
                .extracting(TaskEvent::getMessage)
                .containsExactly("cannot read Secret team/db (files in secrets/db): secrets \"db\" is forbidden: User"
                        + " \"system:serviceaccount:team:web\" cannot get resource \"secrets\"; the task keeps what it"
                        + " had");
    }

    @Test
    void aReattachedTaskGetsAFreshTokenAtOnceAndAChangeMadeMeanwhile() throws Exception {
        AllocationSpec spec = spec("tasks: [{name: web, driver: mock, onChange: Restart, files: [{secret: db}]}]");
        prestart(spec, Duration.ofMinutes(1));
        credentials.stopped();
        // a new agent: no prestart, the process still runs; the Secret changed while no agent watched
        api.put(ObjectRef.Kind.Secret, "db", Map.of("password", "changed", "user", "app"));
        credentials = TaskCredentials.of(
                WorkloadIdentity.of(api, Duration.ofMinutes(1), Clock.systemUTC()),
                ALLOC,
                spec,
                spec.getTasks().get(0),
                taskDir);
        credentials.running(running);
        await().atMost(Duration.ofSeconds(5)).until(() -> read("secrets/token").equals("token-2"));
        await().atMost(Duration.ofSeconds(5)).until(() -> !actions.isEmpty());
        assertThat(read("secrets/db/password")).isEqualTo("changed");
        assertThat(actions)
                .containsExactly("restart: a Secret or ConfigMap it uses changed (files in secrets/db) while the agent"
                        + " was away");
    }

    @Test
    void aTaskThatRemovedItsTokenFindsItAgainAtItsNextStart() throws Exception {
        AllocationSpec spec = spec("tasks: [{name: web, driver: mock}]");
        prestart(spec, Duration.ofMinutes(1));
        Files.delete(taskDir.resolve("secrets/token"));
        credentials.prestart(
                new TaskHookContext(ALLOC, spec.getTasks().get(0), spec, template(), Clock.systemUTC(), events::add));
        assertThat(read("secrets/token")).isEqualTo("token-1");
        assertThat(new String(Files.readAllBytes(taskDir.resolve("secrets/token")), StandardCharsets.US_ASCII))
                .isEqualTo("token-1");
    }
}
