package dev.drover.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckRestart;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.api.v1alpha1.TaskState;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CheckRulesTest {

    private static List<Violation> validate(String taskYaml) {
        String yaml = "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: me}\nspec:\n  nodeName: n\n"
                + "  tasks:\n  - name: web\n    driver: mock\n" + taskYaml.indent(4);
        return AllocationValidator.validate(Serialization.unmarshal(yaml, Allocation.class));
    }

    @Test
    void checksOfEveryTypeAsAUserWritesThemAreValid() {
        assertThat(validate("""
                checks:
                - {name: http, type: http, port: 8080, path: /healthz?full=1, method: HEAD,
                   headers: [{name: X-Token, value: "a b\tc"}], interval: 5s, timeout: 5s}
                - {name: tcp, type: tcp, port: 5432, initialDelay: 30s, failureThreshold: 5, successThreshold: 2}
                - {name: script, type: exec, command: /bin/check, args: [--verbose]}
                checkRestart: {limit: 3, grace: 90s, ignoreWarnings: true}
                """)).isEmpty();
    }

    @Test
    void aTimeoutOfFiveMinutesIsTheLongestAllowed() {
        assertThat(validate("checks: [{name: c, type: tcp, port: 1, interval: 1h, timeout: 5m}]"))
                .isEmpty();
        assertThat(validate("checks: [{name: c, type: tcp, port: 1, interval: 1h, timeout: 5m1ms}]"))
                .singleElement()
                .satisfies(v -> assertThat(v.message())
                        .isEqualTo("\"5m1ms\" is longer than the maximum of 5m; a probe holds one of the node's probe"
                                + " slots until it ends"));
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of("checks: [{name: c, type: exec}]", "spec.tasks[0].checks[0].command", "is required"),
                Arguments.of("checks: [{name: c, type: http}]", "spec.tasks[0].checks[0].port", "is required"),
                Arguments.of("checks: [{name: c, type: tcp}]", "spec.tasks[0].checks[0].port", "is required"),
                Arguments.of(
                        "checks: [{name: c, type: exec, command: x, port: 80}]",
                        "spec.tasks[0].checks[0].port",
                        "exec check"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 80, path: /}]",
                        "spec.tasks[0].checks[0].path",
                        "http checks only"),
                Arguments.of(
                        "checks: [{name: c, type: http, port: 80, args: [x]}]",
                        "spec.tasks[0].checks[0].args",
                        "exec checks only"),
                Arguments.of("checks: [{name: c, type: tcp, port: 0}]", "spec.tasks[0].checks[0].port", "1 to 65535"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1, interval: 500ms}]",
                        "spec.tasks[0].checks[0].interval",
                        "minimum of 1s"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1, timeout: 0s}]",
                        "spec.tasks[0].checks[0].timeout",
                        "more than 0s"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1, timeout: 15s}]",
                        "spec.tasks[0].checks[0].timeout",
                        "15s is longer than the interval 10s"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1, interval: 1h, timeout: 10m}]",
                        "spec.tasks[0].checks[0].timeout",
                        "\"10m\" is longer than the maximum of 5m"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1, interval: 1h, timeout: 1x}]",
                        "spec.tasks[0].checks[0].timeout",
                        "duration"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1, failureThreshold: 0}]",
                        "spec.tasks[0].checks[0].failureThreshold",
                        "1 to 100"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1}, {name: c, type: tcp, port: 2}]",
                        "spec.tasks[0].checks[1].name",
                        "must be unique"),
                Arguments.of("checks: [{name: C_1, type: tcp, port: 1}]", "spec.tasks[0].checks[0].name", "C_1"),
                Arguments.of(
                        "checks: [{name: c, type: http, port: 1, method: CONNECT}]",
                        "spec.tasks[0].checks[0].method",
                        "CONNECT"),
                Arguments.of("checkRestart: {limit: 1}", "spec.tasks[0].checkRestart", "needs checks"),
                Arguments.of(
                        "checks: [{name: c, type: tcp, port: 1}]\ncheckRestart: {limit: -1, grace: soon}",
                        "spec.tasks[0].checkRestart.limit",
                        "out of range"));
    }

    @ParameterizedTest
    @MethodSource("refusals")
    void eachBrokenRuleIsNamedWithItsField(String task, String field, String says) {
        assertThat(validate(task)).as(task).anySatisfy(v -> {
            assertThat(v.path()).isEqualTo(field);
            assertThat(v.message()).contains(says);
        });
    }

    @Test
    void aPathOrHeaderCannotSmuggleASecondRequestOrHeader() {
        String injected = """
                checks:
                - name: c
                  type: http
                  port: 80
                  path: "/ HTTP/1.1\\r\\nHost: evil\\r\\n\\r\\nGET /admin"
                  headers: [{name: "X-A\\r\\nX-B", value: ok}, {name: X-C, value: "ok\\r\\nCookie: stolen"}]
                """;
        assertThat(validate(injected))
                .extracting(Violation::path)
                .contains(
                        "spec.tasks[0].checks[0].path",
                        "spec.tasks[0].checks[0].headers[0].name",
                        "spec.tasks[0].checks[0].headers[1].value");
    }

    @Test
    void aHeaderThatFramesTheExchangeIsRefusedWhateverItsCase() {
        assertThat(validate("""
                        checks:
                        - name: c
                          type: http
                          port: 80
                          headers: [{name: Host, value: web}, {name: CONTENT-length, value: "0"}, {name: TE, value: x}]
                        """))
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].checks[0].headers[1].name", "spec.tasks[0].checks[0].headers[2].name");
    }

    @Test
    void tooManyChecksAreRefusedWithoutLookingFurther() {
        StringBuilder many = new StringBuilder("checks:\n");
        for (int i = 0; i < 9; i++) {
            many.append("- {name: c").append(i).append(", type: tcp, port: 1}\n");
        }
        assertThat(validate(many.toString()))
                .singleElement()
                .satisfies(v -> assertThat(v.message()).contains("at most 8"));
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        Check c = new Check("c", CheckType.TCP);
        assertThat(c.effectiveInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.effectiveTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.effectiveInitialDelay()).isZero();
        assertThat(c.effectiveSuccessThreshold()).isEqualTo(1);
        assertThat(c.effectiveFailureThreshold()).isEqualTo(3);
        assertThat(c.effectivePath()).isEqualTo("/");
        assertThat(c.effectiveMethod()).isEqualTo("GET");
        assertThat(CheckRestart.resolve(null)).isEqualTo(new CheckRestart.Resolved(0, Duration.ofSeconds(1), false));
        assertThat(CheckRestart.resolve(null).enabled()).isFalse();
    }

    @Test
    void typesAndStatusesAreWrittenInLowerCase() {
        Check c = Serialization.unmarshal(
                "{\"name\": \"c\", \"type\": \"exec\", \"command\": \"/bin/true\"}", Check.class);
        assertThat(c.getType()).isEqualTo(CheckType.EXEC);
        assertThat(Serialization.asJson(c)).contains("\"type\":\"exec\"");

        TaskState s = new TaskState();
        s.setChecks(List.of(new CheckStatus("c", CheckStatus.Status.WARNING, "429", "2026-01-01T00:00:00Z")));
        String json = Serialization.asJson(s);
        assertThat(json).contains("\"status\":\"warning\"");
        assertThat(Serialization.unmarshal(json, TaskState.class)).isEqualTo(s);
    }
}
