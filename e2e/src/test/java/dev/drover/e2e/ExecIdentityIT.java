package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;

import dev.drover.cgroups.CgroupParent;
import dev.drover.cgroups.Cgroups;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Workload identity for tasks that run as a user of their own: an exec task (confined, {@code nobody} by default)
 * and a raw_exec task with {@code user: nobody} read their token, a projected Secret file and a {@code valueFrom}
 * variable, and still read the file after the agent swapped in a new data directory for a changed Secret; a sibling
 * task running as {@code daemon} reads none of it, before or after. One agent for node {@code local} under the
 * chart's RBAC ({@link AgentKubeconfig}), exec and raw_exec enabled, a one-second credential poll, its data dir
 * below target/ (an exec task has a /tmp of its own). The tasks write hashes of what they read into their
 * {@code local/}, never a value. Skipped where cgroups cannot be made, as {@link ExecIT} is.
 */
class ExecIdentityIT {

    static final String CANARY = "canary-" + UUID.randomUUID();
    static final Duration WAIT = Duration.ofSeconds(30);
    static final String REFUSED = "reach=yes token=refused file=refused dir=refused";

    @TempDir
    static Path dir;

    static LocalApiServer server;
    static Kubectl kubectl;
    static AgentProcess agent;
    static Path data;

    @BeforeAll
    static void start() throws Exception {
        String probe = TestCgroups.newName();
        try {
            Cgroups cgroups = Cgroups.detect();
            cgroups.create(CgroupParent.own(), probe).remove(WAIT);
        } catch (IOException e) {
            abort("cannot make cgroups below this process's own: " + e.getMessage());
        }
        server = LocalApiServer.start(LocalApiServer.Options.defaults()
                .withNodes(List.of("local"))
                .withKubeconfig(dir.resolve("kubeconfig")));
        kubectl = new Kubectl(server.kubeconfig());
        data = Files.createTempDirectory(ExecIT.dataBase(), "exec-identity-it");
        agent = new AgentProcess(
                        Files.createDirectories(Path.of("target", "agent-logs")).resolve("exec-identity-it.log"),
                        "--kubeconfig",
                        AgentKubeconfig.forNode(server, "local", dir).toString(),
                        "--node",
                        "local",
                        "--data-dir",
                        data.toString(),
                        "--enable-exec",
                        "--enable-raw-exec",
                        "--credential-poll-interval",
                        "1s",
                        "--metrics-port",
                        "-1",
                        "--api-port",
                        "-1")
                .start();
        kubectl.runWithInput("""
                        apiVersion: v1
                        kind: Namespace
                        metadata:
                          name: team
                          labels: {drover.dev/workloads: enabled}
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
                          resourceNames: [confined, switched]
                          verbs: [get]
                        ---
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: RoleBinding
                        metadata: {name: web-secrets, namespace: team}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: web-secrets}
                        subjects:
                        - {kind: ServiceAccount, name: web, namespace: team}
                        """, "apply", "-f", "-").assertOk();
    }

    @AfterAll
    static void stop() throws Exception {
        if (agent != null) {
            agent.close();
        }
        if (server != null) {
            server.close();
        }
        if (data != null) {
            try (Stream<Path> tree = Files.walk(data)) {
                for (Path p : tree.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @Test
    void anExecTaskReadsItsCredentialsAsNobodyAndStillReadsTheSecretFilesTheAgentRefreshed() throws Exception {
        proveIdentity("confined", "exec", "", "");
    }

    @Test
    void aRawExecTaskWithAUserReadsItsCredentialsAndStillReadsTheSecretFilesTheAgentRefreshed() throws Exception {
        // the data dir is the agent's (0700): a raw_exec task with a user reaches its files from its working directory
        proveIdentity("switched", "raw_exec", "    user: nobody\n", "secrets/token");
    }

    /**
     * Allocation {@code name} with Secret {@code name}: task {@code main} (as nobody) reads its token at
     * {@code tokenFile}, the Secret's file and variable, and again on SIGHUP after the Secret changed; task
     * {@code thief} (as daemon) tries each second to read main's secrets through the allocation's directory.
     */
    void proveIdentity(String name, String driver, String mainUser, String tokenFile) throws Exception {
        secret(name, "one-" + CANARY);
        kubectl.runWithInput("""
                        apiVersion: drover.dev/v1alpha1
                        kind: Allocation
                        metadata: {name: %1$s, namespace: team}
                        spec:
                          nodeName: local
                          serviceAccountName: web
                          restartPolicy: {attempts: 0, mode: Fail}
                          tasks:
                          - name: main
                            driver: %2$s
                            killTimeout: 1s
                        %3$s    onChange: Signal
                            changeSignal: SIGHUP
                            env:
                            - {name: TOKEN_FILE, value: "%4$s"}
                            - name: VALUE
                              valueFrom: {secretKeyRef: {name: %1$s, key: value}}
                            files:
                            - secret: %1$s
                              path: app
                            config:
                              command: /bin/sh
                              args:
                              - -c
                              - |
                                umask 077
                                report() {
                                  {
                                    echo "user=$(id -un)"
                                    echo "token-path=$DROVER_TOKEN_PATH"
                                    echo "token=$(sha256sum < "${TOKEN_FILE:-$DROVER_TOKEN_PATH}" | cut -c1-64)"
                                    echo "file=$(sha256sum < secrets/app/value | cut -c1-64)"
                                    echo "env=$(printf '%%s' "$VALUE" | sha256sum | cut -c1-64)"
                                  } > local/seen.tmp 2> local/errors && mv local/seen.tmp local/seen
                                }
                                trap 'echo hup >> local/hups; report' HUP
                                report
                                while :; do sleep 1 & wait $!; done
                          - name: thief
                            driver: %2$s
                            killTimeout: 1s
                            user: daemon
                            config:
                              command: /bin/sh
                              args:
                              - -c
                              - |
                                while :; do
                                  r=no t=refused f=refused d=refused
                                  [ -d ../main/secrets ] && r=yes
                                  cat ../main/secrets/token > /dev/null 2>&1 && t=READ
                                  cat ../main/secrets/app/value > /dev/null 2>&1 && f=READ
                                  ls ../main/secrets/app > /dev/null 2>&1 && d=READ
                                  echo "reach=$r token=$t file=$f dir=$d" >> local/attempts
                                  sleep 1
                                done
                        """.formatted(name, driver, mainUser, tokenFile), "apply", "-f", "-")
                .assertOk();
        Path task = data.resolve("allocs/team").resolve(name).resolve("main");
        Path secrets = task.resolve("secrets");
        Path seen = task.resolve("local/seen");
        await().atMost(WAIT).until(() -> Files.exists(seen));

        assertThat(Files.readString(task.resolve("local/errors"))).isEmpty();
        Map<String, String> first = lines(seen);
        assertThat(first)
                .containsEntry("user", "nobody")
                .containsEntry("token-path", secrets.resolve("token").toString())
                .containsEntry("token", sha256(Files.readAllBytes(secrets.resolve("token"))))
                .containsEntry("file", sha256("one-" + CANARY))
                .containsEntry("env", sha256("one-" + CANARY));
        assertOwnedByNobody(secrets, "rwx------");
        assertOwnedByNobody(secrets.resolve("token"), "rw-------");
        assertOwnedByNobody(secrets.resolve("app"), "rwx------");
        Path oldData = dataDirectory(secrets.resolve("app"));
        assertOwnedByNobody(oldData, "rwx------");
        assertOwnedByNobody(oldData.resolve("value"), "r--------");

        secret(name, "two-" + CANARY);

        // the running process (same variable) re-read the file the agent swapped in, as nobody
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(lines(seen))
                        .as("what the task saw (its errors: %s)", Files.readString(task.resolve("local/errors")))
                        .containsEntry("file", sha256("two-" + CANARY)));
        assertThat(lines(seen)).containsEntry("user", "nobody").containsEntry("env", sha256("one-" + CANARY));
        assertThat(Files.readString(task.resolve("local/errors"))).isEmpty();
        assertThat(Files.readString(task.resolve("local/hups"))).isEqualTo("hup\n");
        Path newData = dataDirectory(secrets.resolve("app"));
        assertThat(newData).isNotEqualTo(oldData);
        assertThat(oldData).doesNotExist();
        assertOwnedByNobody(newData, "rwx------");
        assertOwnedByNobody(newData.resolve("value"), "r--------");
        assertOwnedByNobody(secrets.resolve("token"), "rw-------");

        // the other user tried before and after the swap and read nothing
        Path attempts = data.resolve("allocs/team").resolve(name).resolve("thief/local/attempts");
        long before = Files.readString(attempts).lines().count();
        await().atMost(WAIT).until(() -> Files.readString(attempts).lines().count() > before);
        assertThat(Files.readString(attempts).lines().toList()).isNotEmpty().allMatch(REFUSED::equals);
        assertThat(jsonpath(name, ".status.taskStates.main.restarts")).isIn("", "0");

        kubectl.run("delete", "alloc", "-n", "team", name, "--timeout=30s").assertOk();
    }

    static void secret(String name, String value) {
        kubectl.runWithInput("""
                        apiVersion: v1
                        kind: Secret
                        metadata: {name: %s, namespace: team}
                        stringData: {value: "%s"}
                        """.formatted(name, value), "apply", "-f", "-").assertOk();
    }

    static String jsonpath(String alloc, String path) {
        return kubectl.run("get", "alloc", "-n", "team", alloc, "-o", "jsonpath={" + path + "}")
                .assertOk()
                .out();
    }

    /** The {@code key=value} lines the task wrote. */
    static Map<String, String> lines(Path file) throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8)
                .lines()
                .map(l -> l.split("=", 2))
                .collect(Collectors.toMap(kv -> kv[0], kv -> kv.length > 1 ? kv[1] : ""));
    }

    /** The data directory a projection's {@code ..data} names now. */
    static Path dataDirectory(Path projection) throws IOException {
        return projection.resolve(Files.readSymbolicLink(projection.resolve("..data")));
    }

    static void assertOwnedByNobody(Path p, String mode) throws IOException {
        assertThat(Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName())
                .as("owner of %s", p)
                .isEqualTo("nobody");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS)))
                .as("mode of %s", p)
                .isEqualTo(mode);
    }

    static String sha256(String value) throws Exception {
        return sha256(value.getBytes(StandardCharsets.UTF_8));
    }

    static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
