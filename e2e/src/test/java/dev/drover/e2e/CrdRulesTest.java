package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.validation.AllocationValidator;
import dev.drover.api.validation.Violation;
import dev.drover.local.LocalApiServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every {@code x-kubernetes-validations} rule of the Allocation CRD, broken by a {@code kubectl apply} that the local
 * API server refuses with the real server's message (CEL evaluated by cel-java), and the same hostile input run
 * through the agent's own {@link AllocationValidator}, which must refuse it at the same place: the two agree.
 */
class CrdRulesTest {

    @RegisterExtension
    static final LocalCluster CLUSTER = new LocalCluster("local", "other");

    static LocalApiServer server;
    static Kubectl kubectl;

    @BeforeAll
    static void start() throws Exception {
        server = CLUSTER.server();
        kubectl = CLUSTER.kubectl();
    }

    /**
     * A rule (schema path and rule text), a spec that breaks it, and the field error the real server answers.
     *
     * @param path   the rule's place in the schema, as listed by {@link #rulesOfTheCrd()}
     * @param error  the server's errors: the rule's, after the schema's where the schema refuses the value too
     * @param where  the field path of the error; the Java validator's violation names it or a field below it
     */
    record Case(String path, String rule, String spec, String where, String error) {}

    static final String TASK = "- {name: main, driver: mock}\n";

    static final List<Case> CASES = List.of(
            new Case(
                    "spec.restartPolicy",
                    "!has(self.attempts) || self.attempts != 0 || !has(self.mode) || self.mode == 'Fail'",
                    "restartPolicy: {attempts: 0, mode: Delay}\ntasks:\n" + TASK,
                    "spec.restartPolicy",
                    "spec.restartPolicy: Invalid value: \"object\": attempts 0 is only allowed with mode Fail"),
            new Case(
                    "spec.restartPolicy",
                    "!has(self.interval) || duration(self.interval) >= duration('5s')",
                    "restartPolicy: {interval: 1s}\ntasks:\n" + TASK,
                    "spec.restartPolicy",
                    "spec.restartPolicy: Invalid value: \"object\": interval must be at least 5s"),
            new Case(
                    "spec.tasks",
                    "self.filter(t, has(t.leader) && t.leader).size() <= 1",
                    "tasks:\n- {name: a, driver: mock, leader: true}\n- {name: b, driver: mock, leader: true}\n",
                    "spec.tasks",
                    "spec.tasks: Invalid value: \"array\": at most one task may be the leader"),
            new Case(
                    "spec.tasks[*].resources.devices[*]",
                    "!has(self.count) || self.count >= 1",
                    "tasks:\n- name: main\n  driver: mock\n  resources: {devices: [{name: nvidia/gpu, count: 0}]}\n",
                    "spec.tasks[0].resources.devices[0]",
                    "[spec.tasks[0].resources.devices[0].count: Invalid value: 0: spec.tasks[0].resources.devices[0].count"
                            + " in body should be greater than or equal to 1, spec.tasks[0].resources.devices[0]: Invalid"
                            + " value: \"object\": device count must be at least 1]"),
            new Case(
                    "spec.tasks[*].restartPolicy",
                    "!has(self.attempts) || self.attempts != 0 || !has(self.mode) || self.mode == 'Fail'",
                    "tasks:\n- name: main\n  driver: mock\n  restartPolicy: {attempts: 0, mode: Delay}\n",
                    "spec.tasks[0].restartPolicy",
                    "spec.tasks[0].restartPolicy: Invalid value: \"object\": attempts 0 is only allowed with mode Fail"),
            new Case(
                    "spec.tasks[*].restartPolicy",
                    "!has(self.interval) || duration(self.interval) >= duration('5s')",
                    "tasks:\n- name: main\n  driver: mock\n  restartPolicy: {interval: 2s}\n",
                    "spec.tasks[0].restartPolicy",
                    "spec.tasks[0].restartPolicy: Invalid value: \"object\": interval must be at least 5s"),
            new Case(
                    "spec.tasks[*]",
                    "has(self.onChange) && self.onChange == 'Signal' ? has(self.changeSignal) : !has(self.changeSignal)",
                    "tasks:\n- {name: main, driver: mock, onChange: Signal}\n",
                    "spec.tasks[0]",
                    "spec.tasks[0]: Invalid value: \"object\": changeSignal is needed with onChange: Signal, and only"
                            + " then"),
            new Case(
                    "spec.tasks[*].env[*]",
                    "!(has(self.value) && has(self.valueFrom))",
                    "tasks:\n- name: main\n  driver: mock\n"
                            + "  env: [{name: A, value: x, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n",
                    "spec.tasks[0].env[0]",
                    "spec.tasks[0].env[0]: Invalid value: \"object\": give value or valueFrom, not both"),
            new Case(
                    "spec.tasks[*].env[*].valueFrom",
                    "has(self.secretKeyRef) != has(self.configMapKeyRef)",
                    "tasks:\n- name: main\n  driver: mock\n  env: [{name: A, valueFrom: {}}]\n",
                    "spec.tasks[0].env[0].valueFrom",
                    "spec.tasks[0].env[0].valueFrom: Invalid value: \"object\": valueFrom needs exactly one of"
                            + " secretKeyRef and configMapKeyRef"),
            new Case(
                    "spec.tasks[*].files[*]",
                    "has(self.secret) != has(self.configMap)",
                    "tasks:\n- name: main\n  driver: mock\n  files: [{secret: a, configMap: b}]\n",
                    "spec.tasks[0].files[0]",
                    "spec.tasks[0].files[0]: Invalid value: \"object\": a files entry needs exactly one of secret and"
                            + " configMap"),
            new Case(
                    "spec.tasks[*].files[*]",
                    "!has(self.secret) || (has(self.path) ? self.path : self.secret) != 'token'",
                    "tasks:\n- name: main\n  driver: mock\n  files: [{secret: token}]\n",
                    "spec.tasks[0].files[0]",
                    "spec.tasks[0].files[0]: Invalid value: \"object\": secrets/token is the task's ServiceAccount"
                            + " token; give this Secret another path"),
            new Case(
                    "spec.tasks[*]",
                    "!has(self.checkRestart) || has(self.checks)",
                    "tasks:\n- name: main\n  driver: mock\n  checkRestart: {limit: 1}\n",
                    "spec.tasks[0]",
                    "spec.tasks[0]: Invalid value: \"object\": checkRestart needs checks"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "self.type != 'exec' || has(self.command)",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: exec}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": an exec check needs command"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "self.type == 'exec' || has(self.port)",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: http}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": an http or tcp check needs port"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "self.type == 'exec' || !(has(self.command) || has(self.args))",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: tcp, port: 1, command: x}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": command and args are for exec checks only"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "self.type == 'http' || !(has(self.path) || has(self.method) || has(self.headers))",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: tcp, port: 1, path: /}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": path, method and headers are for http checks only"),
            new Case(
                    "spec.tasks[*].checks[*].headers[*]",
                    "!(self.name.lowerAscii() in ['connection', 'content-length', 'transfer-encoding', 'te', 'trailer',"
                            + " 'upgrade', 'expect', 'keep-alive'])",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: http, port: 1,"
                            + " headers: [{name: Transfer-Encoding, value: chunked}]}]\n",
                    "spec.tasks[0].checks[0].headers[0]",
                    "spec.tasks[0].checks[0].headers[0]: Invalid value: \"object\": the probe sets Connection,"
                            + " Content-Length, Transfer-Encoding, TE, Trailer, Upgrade, Expect and Keep-Alive itself;"
                            + " remove the header"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "self.type != 'exec' || !has(self.port)",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: exec, command: x, port: 1}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": an exec check has no port"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "!has(self.interval) || duration(self.interval) >= duration('1s')",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: tcp, port: 1, interval: 500ms, timeout: 100ms}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": interval must be at least 1s"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "!has(self.timeout) || duration(self.timeout) > duration('0s')",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: tcp, port: 1, timeout: 0s}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": timeout must be more than 0s"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "!has(self.timeout) || duration(self.timeout) <= duration('5m')",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: tcp, port: 1, interval: 1h, timeout: 301s}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": timeout must be at most 5m"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "duration(has(self.timeout) ? self.timeout : '2s') <= duration(has(self.interval) ? self.interval : '10s')",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: tcp, port: 1, timeout: 15s}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": timeout must not be longer than interval"),
            new Case(
                    "spec.tasks[*].checks[*].args",
                    "self.all(a, size(a) <= 4096)",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: exec, command: x, args: ['"
                            + "a".repeat(4097) + "']}]\n",
                    "spec.tasks[0].checks[0].args",
                    "spec.tasks[0].checks[0].args: Invalid value: \"array\": each of args may have at most 4096 characters"),
            new Case(
                    "spec.tasks[*].serviceAccountToken",
                    "!has(self.audience) || self.audience != 'drover.dev/agent'",
                    "tasks:\n- name: main\n  driver: mock\n  serviceAccountToken: {audience: drover.dev/agent}\n",
                    "spec.tasks[0].serviceAccountToken",
                    "spec.tasks[0].serviceAccountToken: Invalid value: \"object\": drover.dev/agent is the audience of"
                            + " Drover's agents; a task's token may not be for it"),
            new Case(
                    "spec.network.ports[*].name",
                    "self.matches('[a-z]')",
                    "network: {ports: [{name: '123'}]}\ntasks:\n" + TASK,
                    "spec.network.ports[0].name",
                    "spec.network.ports[0].name: Invalid value: \"string\": a port name needs at least one letter"),
            new Case(
                    "spec.network",
                    "!has(self.ports) || size(self.ports) == 0 || !has(self.mode) || self.mode != 'none'",
                    "network: {mode: none, ports: [{name: http}]}\ntasks:\n" + TASK,
                    "spec.network",
                    "spec.network: Invalid value: \"object\": a none network has no ports: nothing reaches it"),
            new Case(
                    "spec.network",
                    "!has(self.ports) || (has(self.mode) && self.mode == 'bridge')"
                            + " || self.ports.all(p, !has(p.to) || (has(p.static) && p.to == p.static))",
                    "network: {ports: [{name: http, to: 80}]}\ntasks:\n" + TASK,
                    "spec.network",
                    "spec.network: Invalid value: \"object\": to maps a host port into a bridge network; in host mode a"
                            + " task listens on the host port itself"),
            new Case(
                    "spec.network",
                    "!has(self.ports) || self.ports.all(p, !has(p.static)"
                            + " || self.ports.filter(q, has(q.static) && q.static == p.static).size() == 1)",
                    "network: {ports: [{name: a, static: 80}, {name: b, static: 80}]}\ntasks:\n" + TASK,
                    "spec.network",
                    "spec.network: Invalid value: \"object\": two ports name the same static port"),
            new Case(
                    "spec.tasks[*].checks[*]",
                    "!has(self.port) || (type(self.port) == int ? self.port >= 1 && self.port <= 65535"
                            + " : self.port.matches('^[a-z0-9]+(-[a-z0-9]+)*$'))",
                    "tasks:\n- name: main\n  driver: mock\n  checks: [{name: c, type: tcp, port: '-x'}]\n",
                    "spec.tasks[0].checks[0]",
                    "spec.tasks[0].checks[0]: Invalid value: \"object\": port is a port number (1 to 65535) or the name"
                            + " of a port of spec.network.ports"),
            new Case(
                    "spec",
                    "!has(self.network) || !has(self.network.mode) || self.network.mode == 'host'"
                            + " || self.tasks.all(t, t.driver != 'raw_exec')",
                    "network: {mode: bridge}\ntasks:\n- {name: main, driver: raw_exec}\n",
                    "spec",
                    "spec: Invalid value: \"object\": raw_exec tasks run in the node's network: give them network mode"
                            + " host, or use exec or oci"),
            new Case(
                    "spec",
                    "!has(self.services) || self.services.all(s, has(self.network) && has(self.network.ports)"
                            + " && self.network.ports.exists(p, p.name == s.port))",
                    "services: [{name: web, port: http}]\ntasks:\n" + TASK,
                    "spec",
                    "spec: Invalid value: \"object\": each of services names a port of spec.network.ports"));

    static String allocation(String name, String node, String spec) {
        return "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: " + name
                + ", namespace: default}\nspec:\n  nodeName: " + node + "\n"
                + spec.lines().map(l -> "  " + l + "\n").reduce("", String::concat);
    }

    @Test
    void eachRuleRefusesItsViolationWithTheRealMessageAndTheJavaValidatorAgrees() {
        int n = 0;
        for (Case c : CASES) {
            String yaml = allocation("rule-" + n++, "local", c.spec());
            var refused = kubectl.runWithInput(yaml, "apply", "-f", "-");
            assertThat(refused.exitCode()).as(c.rule()).isNotZero();
            assertThat(refused.err())
                    .as(c.rule())
                    .contains("Allocation.drover.dev \"rule-" + (n - 1) + "\" is invalid: " + c.error());

            List<Violation> java = AllocationValidator.validate(Serialization.unmarshal(yaml, Allocation.class));
            assertThat(java)
                    .as("the Java validator refuses what the CEL rule %s refuses", c.rule())
                    .anyMatch(v -> v.path().equals(c.where())
                            || v.path().startsWith(c.where() + ".")
                            || v.path().startsWith(c.where() + "["));
        }
    }

    @Test
    void validAllocationsPassBothTheRulesAndTheJavaValidator() {
        String yaml = allocation("valid", "local", """
                restartPolicy: {attempts: 0, mode: Fail, interval: 10s}
                tasks:
                - name: a
                  driver: mock
                  leader: true
                  restartPolicy: {attempts: 2, mode: Delay, interval: 1m}
                  resources: {devices: [{name: nvidia/gpu, count: 1}]}
                  checks:
                  - {name: web, type: http, port: 8080, path: /healthz, headers: [{name: X-A, value: b}], timeout: 10s}
                  - {name: db, type: tcp, port: 5432}
                  - {name: script, type: exec, command: /bin/check, args: [-v], interval: 1s, timeout: 1s}
                  - {name: slow, type: tcp, port: 5433, interval: 1h, timeout: 5m}
                  checkRestart: {limit: 3, grace: 90s}
                - {name: b, driver: mock}
                """);
        kubectl.runWithInput(yaml, "apply", "-f", "-").assertOk();
        assertThat(AllocationValidator.validate(Serialization.unmarshal(yaml, Allocation.class)))
                .isEmpty();
    }

    @Test
    void theNodeNameCannotChangeButAnUnchangedSpecStillUpdates() {
        kubectl.runWithInput(allocation("moving", "local", "tasks:\n" + TASK), "apply", "-f", "-")
                .assertOk();
        var moved = kubectl.runWithInput(allocation("moving", "other", "tasks:\n" + TASK), "apply", "-f", "-");
        assertThat(moved.exitCode()).isNotZero();
        assertThat(moved.err())
                .contains(
                        "Allocation.drover.dev \"moving\" is invalid: spec.nodeName: Invalid value: \"string\": nodeName is"
                                + " immutable: create a new allocation to move it");
        kubectl.run("label", "alloc", "moving", "team=a").assertOk();
    }

    @Test
    void theServiceAccountDefaultsToDefaultAndCannotChange() {
        kubectl.runWithInput(allocation("as-sa", "local", "tasks:\n" + TASK), "apply", "-f", "-")
                .assertOk();
        assertThat(kubectl.run("get", "alloc", "as-sa", "-o", "jsonpath={.spec.serviceAccountName}")
                        .assertOk()
                        .out())
                .isEqualTo("default");
        var changed = kubectl.runWithInput(
                allocation("as-sa", "local", "serviceAccountName: admin\ntasks:\n" + TASK), "apply", "-f", "-");
        assertThat(changed.exitCode()).isNotZero();
        assertThat(changed.err())
                .contains(
                        "spec.serviceAccountName: Invalid value: \"string\": serviceAccountName is immutable: create a"
                                + " new allocation to run as another ServiceAccount");
    }

    /** A rule added to the CRD without a case here fails this test. */
    @Test
    void everyRuleOfTheCrdHasACase() throws Exception {
        Set<String> covered = new TreeSet<>();
        CASES.forEach(c -> covered.add(c.path() + " | " + c.rule()));
        covered.add("spec.nodeName | self == oldSelf");
        covered.add("spec.serviceAccountName | self == oldSelf");
        covered.add("spec.network | self == oldSelf");
        assertThat(new TreeSet<>(rulesOfTheCrd())).isEqualTo(covered);
    }

    /** Every rule of the CRD the server installs, as {@code path | rule}. */
    static List<String> rulesOfTheCrd() throws Exception {
        try (InputStream in = LocalApiServer.class.getClassLoader().getResourceAsStream(LocalApiServer.DROVER_CRD)) {
            var crd = new com.fasterxml.jackson.databind.ObjectMapper(
                            new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                    .readTree(in);
            List<String> out = new ArrayList<>();
            for (var version : crd.path("spec").path("versions")) {
                walk(version.path("schema").path("openAPIV3Schema"), "", out);
            }
            return out;
        }
    }

    private static void walk(com.fasterxml.jackson.databind.JsonNode schema, String path, List<String> out) {
        for (var rule : schema.path("x-kubernetes-validations")) {
            out.add(path + " | " + rule.path("rule").asText().strip());
        }
        for (Iterator<Map.Entry<String, com.fasterxml.jackson.databind.JsonNode>> it =
                        schema.path("properties").fields();
                it.hasNext(); ) {
            var p = it.next();
            walk(p.getValue(), path.isEmpty() ? p.getKey() : path + "." + p.getKey(), out);
        }
        if (schema.has("items")) {
            walk(schema.path("items"), path + "[*]", out);
        }
    }
}
