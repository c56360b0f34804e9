package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.drover.local.LocalApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21's acceptance: workload identity and secrets end to end. One agent for node {@code local} runs as the
 * chart's ServiceAccount under the chart's RBAC and node confinement policies ({@link AgentKubeconfig}), with
 * raw_exec and a one-second credential poll; the tasks are shells that prove what they got without printing it,
 * and everything is driven with the real kubectl. Every Secret value holds one canary string, which the last test
 * looks for in everything the agent shows the world.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WorkloadIdentityIT {

    static final String CANARY = "canary-" + UUID.randomUUID();
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path data;
    static int metricsPort;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        data = dir.resolve("data");
        metricsPort = AgentIT.freePort();
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("workload-identity-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        data.toString(),
                        "--enable-raw-exec",
                        "--credential-poll-interval",
                        "1s",
                        "--metrics-port",
                        Integer.toString(metricsPort),
                        "--api-port",
                        "-1")
                .start();
        apply("""
                apiVersion: v1
                kind: Namespace
                metadata:
                  name: team
                  labels: {drover.dev/workloads: enabled}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: legacy}
                ---
                apiVersion: v1
                kind: ServiceAccount
                metadata: {name: web, namespace: team}
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: Role
                metadata: {name: web-secrets, namespace: team}
                rules:
                - apiGroups: [""]
                  resources: [secrets]
                  resourceNames: [db, rotating, hupped]
                  verbs: [get]
                ---
                apiVersion: rbac.authorization.k8s.io/v1
                kind: RoleBinding
                metadata: {name: web-secrets, namespace: team}
                roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: web-secrets}
                subjects:
                - {kind: ServiceAccount, name: web, namespace: team}
                """);
        secret("team", "db", "password", CANARY);
        secret("team", "locked", "password", CANARY);
        secret("team", "rotating", "value", "one-" + CANARY);
        secret("team", "hupped", "value", "one-" + CANARY);
        secret("legacy", "db", "password", CANARY);
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static void apply(String yaml) {
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
    }

    static void secret(String namespace, String name, String key, String value) {
        apply("""
                apiVersion: v1
                kind: Secret
                metadata: {name: %s, namespace: %s}
                stringData: {%s: "%s"}
                """.formatted(name, namespace, key, value));
    }

    /**
     * An allocation of one raw_exec task {@code main} running {@code script} with /bin/sh in its task directory;
     * {@code spec} and {@code task} are extra YAML lines for the allocation's spec and the task.
     */
    static void shell(String namespace, String name, String spec, String task, String script) {
        apply("""
                apiVersion: drover.dev/v1alpha1
                kind: Allocation
                metadata: {name: %s, namespace: %s}
                spec:
                  nodeName: local
                  restartPolicy: {attempts: 0, mode: Fail}
                %s  tasks:
                  - name: main
                    driver: raw_exec
                    killTimeout: 1s
                %s    config:
                      command: /bin/sh
                      args:
                      - -c
                      - |
                %s""".formatted(name, namespace, spec, task, script.indent(8)));
    }

    static Path taskDir(String namespace, String alloc) {
        return data.resolve("allocs").resolve(namespace).resolve(alloc).resolve("main");
    }

    /** A file the task writes, once it is there. */
    static String awaitFile(Path file) {
        await().atMost(WAIT).until(() -> Files.exists(file));
        return read(file);
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * {@code type: message} of each task event the status of {@code alloc} keeps, one a line: the agent folds an
     * allocation's Normal task events into one Event naming their types, and the status keeps their messages.
     */
    static String taskEvents(String namespace, String alloc) {
        return kubectl.run(
                        "get",
                        "alloc",
                        alloc,
                        "-n",
                        namespace,
                        "-o",
                        "jsonpath={range .status.taskStates.*.events[*]}{.type}: {.message}{\"\\n\"}{end}")
                .assertOk()
                .out();
    }

    /** {@code reason: message} of each Event about {@code alloc}, one a line. */
    static String events(String namespace, String alloc) {
        return kubectl.run(
                        "get",
                        "events",
                        "-n",
                        namespace,
                        "--field-selector",
                        "involvedObject.name=" + alloc,
                        "-o",
                        "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}")
                .assertOk()
                .out();
    }

    static String jsonpath(String namespace, String alloc, String path) {
        return kubectl.run("get", "alloc", "-n", namespace, alloc, "-o", "jsonpath={" + path + "}")
                .assertOk()
                .out();
    }

    static void waitFor(String namespace, String alloc, String clientStatus) {
        kubectl.run(
                        "wait",
                        "-n",
                        namespace,
                        "alloc/" + alloc,
                        "--for=jsonpath={.status.clientStatus}=" + clientStatus,
                        "--timeout=" + WAIT.toSeconds() + "s")
                .assertOk();
    }

    @Test
    @Order(1)
    void aTaskGetsASecretItsServiceAccountMayReadAsAVariableAndAsAFile() throws Exception {
        shell("team", "reader", "  serviceAccountName: web\n", """
                    env:
                    - name: DB_PASSWORD
                      valueFrom: {secretKeyRef: {name: db, key: password}}
                    files:
                    - secret: db
                """, """
                if [ -n "$DB_PASSWORD" ] && [ "$DB_PASSWORD" = "$(cat secrets/db/password)" ]; then
                  echo match > result.tmp
                else
                  echo mismatch > result.tmp
                fi
                mv result.tmp result
                exec sleep 600
                """);

        Path task = taskDir("team", "reader");
        assertThat(awaitFile(task.resolve("result"))).isEqualTo("match\n");
        Path password = task.resolve("secrets/db/password");
        assertThat(read(password)).isEqualTo(CANARY);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(password)))
                .isEqualTo("r--------");
        waitFor("team", "reader", "Running");
    }

    @Test
    @Order(2)
    void aSecretTheServiceAccountMayNotReadFailsTheTaskWithTheApiServersReason() {
        shell("team", "nosy", "  serviceAccountName: web\n", """
                    env:
                    - name: STOLEN
                      valueFrom: {secretKeyRef: {name: locked, key: password}}
                """, "exec sleep 600\n");

        waitFor("team", "nosy", "Failed");
        assertThat(jsonpath("team", "nosy", ".status.taskStates.main.failed")).isEqualTo("true");
        assertThat(events("team", "nosy"))
                .containsPattern("SetupFailure: .*Secret team/locked")
                .contains("secrets \"locked\" is forbidden: User \"system:serviceaccount:team:web\" cannot get"
                        + " resource \"secrets\"");
        assertThat(kubectl.run("describe", "alloc", "-n", "team", "nosy")
                        .assertOk()
                        .out())
                .contains("SetupFailure")
                .contains("Secret team/locked");
        assertThat(taskDir("team", "nosy").resolve(".drover-raw-exec/pid")).doesNotExist();
    }

    @Test
    @Order(3)
    void aRotatedSecretIsSwappedInPlaceAndRestartsTheTaskOnceWithTheNewValue() {
        shell("team", "rotor", "  serviceAccountName: web\n", """
                    onChange: Restart
                    env:
                    - name: VALUE
                      valueFrom: {secretKeyRef: {name: rotating, key: value}}
                    files:
                    - secret: rotating
                """, """
                umask 077
                printf '%s' "$VALUE" > env-value.tmp && mv env-value.tmp env-value
                echo started >> starts
                exec sleep 600
                """);
        Path task = taskDir("team", "rotor");
        Path file = task.resolve("secrets/rotating/value");
        await().atMost(WAIT).until(() -> Files.exists(task.resolve("env-value")));
        assertThat(read(task.resolve("env-value"))).isEqualTo("one-" + CANARY);
        assertThat(read(file)).isEqualTo("one-" + CANARY);

        secret("team", "rotating", "value", "two-" + CANARY);

        await().atMost(WAIT).until(() -> read(file).equals("two-" + CANARY));
        await().atMost(WAIT).until(() -> read(task.resolve("env-value")).equals("two-" + CANARY));
        // exactly once: two poll intervals later it has not restarted again
        await().during(Duration.ofMillis(2500))
                .atMost(Duration.ofSeconds(5))
                .until(() -> read(task.resolve("starts")).lines().count() == 2);
        assertThat(jsonpath("team", "rotor", ".status.taskStates.main.restarts"))
                .isEqualTo("1");
        assertThat(taskEvents("team", "rotor"))
                .containsPattern("RestartSignaled: .*a Secret or ConfigMap it uses changed");
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(events("team", "rotor"))
                        .containsPattern("(?i)RestartSignaled.*: task main")
                        .doesNotContain("CredentialRefreshFailed"));
        waitFor("team", "rotor", "Running");
    }

    @Test
    @Order(4)
    void onChangeSignalTellsTheRunningTaskWhichReadsTheNewFileInPlace() throws Exception {
        shell("team", "listener", "  serviceAccountName: web\n", """
                    onChange: Signal
                    changeSignal: SIGHUP
                    files:
                    - secret: hupped
                """, """
                umask 077
                trap 'echo hup >> hups; cat secrets/hupped/value > seen.tmp && mv seen.tmp seen' HUP
                cat secrets/hupped/value > seen.tmp && mv seen.tmp seen
                while :; do sleep 1 & wait $!; done
                """);
        Path task = taskDir("team", "listener");
        assertThat(awaitFile(task.resolve("seen"))).isEqualTo("one-" + CANARY);
        String pid = read(task.resolve(".drover-raw-exec/pid"));

        secret("team", "hupped", "value", "two-" + CANARY);

        await().atMost(WAIT).until(() -> read(task.resolve("seen")).equals("two-" + CANARY));
        assertThat(read(task.resolve(".drover-raw-exec/pid")))
                .as("the same process")
                .isEqualTo(pid);
        assertThat(read(task.resolve("hups"))).isEqualTo("hup\n");
        assertThat(jsonpath("team", "listener", ".status.taskStates.main.restarts"))
                .isIn("", "0");
        await().atMost(WAIT) // the status is written a moment after
                .untilAsserted(() -> assertThat(taskEvents("team", "listener"))
                        .containsPattern("Signaling: .*a Secret or ConfigMap it uses changed"));
        await().atMost(WAIT)
                .untilAsserted(
                        () -> assertThat(events("team", "listener")).containsPattern("(?i)Signaling.*: task main"));
    }

    @Test
    @Order(5)
    void theTaskTokenIsTheServiceAccountAtTheApiServer() throws Exception {
        // only the server and the CA to trust: the task's token is its only credential
        Path kubeconfig = dir.resolve("server-only.kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: local
                  cluster:
                    server: %s
                    certificate-authority-data: %s
                contexts:
                - name: local
                  context: {cluster: local}
                current-context: local
                """.formatted(
                server.url(),
                Base64.getEncoder().encodeToString(server.certificatePem().getBytes(StandardCharsets.US_ASCII))));
        shell("team", "whoami", "  serviceAccountName: web\n", """
                    env:
                    - {name: KUBECONFIG, value: "%s"}
                    - {name: KUBECTL, value: "%s"}
                """.formatted(kubeconfig, Kubectl.find()), """
                printf '%s' "$DROVER_TOKEN_PATH" > token-path
                "$KUBECTL" --cache-dir="$PWD/kube-cache" --token "$(cat "$DROVER_TOKEN_PATH")" auth whoami \\
                  -o jsonpath='{.status.userInfo.username}' > whoami.tmp 2>&1
                mv whoami.tmp whoami
                exec sleep 600
                """);
        Path task = taskDir("team", "whoami");

        assertThat(awaitFile(task.resolve("whoami"))).isEqualTo("system:serviceaccount:team:web");
        Path token = task.resolve("secrets/token");
        assertThat(read(task.resolve("token-path"))).isEqualTo(token.toString());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token)))
                .isEqualTo("rw-------");
        assertThat(new Kubectl(kubeconfig).run("auth", "whoami").exitCode())
                .as("without the token the same kubeconfig is nobody")
                .isNotZero();
    }

    @Test
    @Order(6)
    void anUnlabelledNamespaceRefusesSecretsButRunsATaskThatNeedsNone() {
        shell("legacy", "plain", "", "", """
                printf '%s' "${DROVER_TOKEN_PATH-unset}" > token-path
                exec sleep 600
                """);
        shell("legacy", "wants", "", """
                    env:
                    - name: DB_PASSWORD
                      valueFrom: {secretKeyRef: {name: db, key: password}}
                """, "exec sleep 600\n");

        waitFor("legacy", "plain", "Running");
        assertThat(awaitFile(taskDir("legacy", "plain").resolve("token-path"))).isEqualTo("unset");
        assertThat(taskDir("legacy", "plain").resolve("secrets/token")).doesNotExist();
        assertThat(taskEvents("legacy", "plain"))
                .containsPattern("TaskSetup: Starting without a ServiceAccount token: .*label namespace legacy"
                        + " drover.dev/workloads=enabled");

        waitFor("legacy", "wants", "Failed");
        assertThat(events("legacy", "wants"))
                .containsPattern("SetupFailure: .*label namespace legacy drover.dev/workloads=enabled");
    }

    @Test
    @Order(100)
    void noSecretValueLeavesTheTask() throws Exception {
        // it did reach the tasks
        assertThat(read(taskDir("team", "reader").resolve("secrets/db/password")))
                .isEqualTo(CANARY);

        String allocs =
                kubectl.run("get", "alloc", "-A", "-o", "yaml").assertOk().out();
        String events =
                kubectl.run("get", "events", "-A", "-o", "yaml").assertOk().out();
        String described = kubectl.run("describe", "alloc", "-A").assertOk().out();
        String metrics = AgentProcess.metrics(metricsPort);
        String dump = stateDump();
        String log = agent.log();

        assertThat(allocs).contains("rotor").contains("RestartSignaled").doesNotContain(CANARY);
        assertThat(events).contains("SetupFailure").doesNotContain(CANARY);
        assertThat(described).contains("listener").doesNotContain(CANARY);
        assertThat(metrics).contains("drover_").doesNotContain(CANARY);
        assertThat(dump).contains("rotating").doesNotContain(CANARY);
        assertThat(log).contains("is ready").doesNotContain(CANARY);
    }

    static String stateDump() throws Exception {
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-jar",
                        AgentProcess.JAR.toString(),
                        "state",
                        "dump",
                        "--data-dir",
                        data.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
