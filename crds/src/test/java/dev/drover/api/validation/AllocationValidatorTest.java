package dev.drover.api.validation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class AllocationValidatorTest {

    private static List<Violation> validate(String specYaml) {
        String yaml =
                "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: me}\nspec:\n" + specYaml.indent(2);
        return AllocationValidator.validate(Serialization.unmarshal(yaml, Allocation.class));
    }

    private static final String TASK = "tasks: [{name: web, driver: mock}]\n";

    @Test
    void validAllocationHasNoViolations() {
        assertThat(validate("""
                nodeName: node-1
                restartPolicy: {attempts: 2, interval: 1m, delay: 1s, mode: Fail}
                ephemeralDisk: {sizeMB: 100, sticky: true}
                tasks:
                - name: web
                  driver: mock
                  leader: true
                  killTimeout: 10s
                  shutdownDelay: 0s
                  env: [{name: A_1, value: x}]
                  resources: {cpuMillis: 100, memoryMB: 64, devices: [{name: nvidia/gpu/Tesla T4, count: 2}]}
                - name: init
                  driver: raw_exec
                  lifecycle: {hook: Prestart}
                """)).isEmpty();
    }

    @Test
    void aHardCpuLimitNeedsCpuMillisAndCpuIsBounded() {
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock, resources: {cpuHardLimit: true}},"
                        + " {name: b, driver: mock, resources: {cpuMillis: 1000001}},"
                        + " {name: c, driver: mock, resources: {cpuMillis: 250, cpuHardLimit: true}}]\n"))
                .containsExactly(
                        new Violation(
                                "spec.tasks[0].resources.cpuHardLimit",
                                "needs cpuMillis above 0: it makes cpuMillis a hard quota"),
                        new Violation(
                                "spec.tasks[1].resources.cpuMillis",
                                "1000001 is more than 1000000 (a thousand cores)"));
    }

    @Test
    void nodeNameIsRequired() {
        assertThat(validate(TASK))
                .containsExactly(new Violation(
                        "spec.nodeName", "is required: the name of the node whose agent runs this allocation"));
    }

    @Test
    void atLeastOneTask() {
        assertThat(validate("nodeName: n\ntasks: []\n"))
                .containsExactly(new Violation("spec.tasks", "needs at least one task"));
    }

    @Test
    void atMost64Tasks() {
        String tasks = IntStream.range(0, 65)
                .mapToObj(i -> "- {name: t" + i + ", driver: mock}")
                .collect(Collectors.joining("\n"));
        assertThat(validate("nodeName: n\ntasks:\n" + tasks + "\n"))
                .containsExactly(new Violation("spec.tasks", "has 65 tasks; at most 64 are allowed"));
    }

    @Test
    void taskNamesMustBeUnique() {
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock}, {name: a, driver: mock}]\n"))
                .containsExactly(new Violation(
                        "spec.tasks[1].name", "\"a\" is used by another task; task names must be unique"));
    }

    @Test
    void taskNamesAreDns1123LabelsSoTheyCannotEscapeTheAllocDir() {
        List<Violation> v = validate("nodeName: n\ntasks: [{name: ../etc, driver: mock}, {name: Web, driver: mock}]\n");
        assertThat(v).extracting(Violation::path).containsExactly("spec.tasks[0].name", "spec.tasks[1].name");
        assertThat(v.getFirst().message()).startsWith("\"../etc\" is not a DNS-1123 label");
    }

    @Test
    void nameAndDriverAreRequired() {
        assertThat(validate("nodeName: n\ntasks: [{config: {}}]\n"))
                .containsExactly(
                        new Violation("spec.tasks[0].name", "is required"),
                        new Violation("spec.tasks[0].driver", "is required (mock, raw_exec, exec or oci)"));
    }

    @Test
    void atMostOneLeader() {
        assertThat(
                        validate(
                                "nodeName: n\ntasks: [{name: a, driver: mock, leader: true}, {name: b, driver: mock, leader: true}]\n"))
                .containsExactly(
                        new Violation("spec.tasks", "has 2 leaders [a, b]; at most one task may be the leader"));
    }

    @Test
    void durationsMustBeWellFormed() {
        List<Violation> v =
                validate("nodeName: n\ntasks: [{name: a, driver: mock, killTimeout: 5, shutdownDelay: soon}]\n");
        assertThat(v)
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].killTimeout", "spec.tasks[0].shutdownDelay");
        assertThat(v.get(0).message()).contains("\"5\" is not a duration").contains("e.g. 250ms, 15s, 1h30m");
    }

    @Test
    void attemptsZeroOnlyWithModeFail() {
        assertThat(validate("nodeName: n\nrestartPolicy: {attempts: 0, mode: Delay}\n" + TASK))
                .containsExactly(new Violation(
                        "spec.restartPolicy.mode", "Delay needs attempts > 0; with attempts 0 use mode Fail"));
    }

    @Test
    void intervalAtLeastFiveSeconds() {
        assertThat(validate("nodeName: n\nrestartPolicy: {attempts: 1, interval: 4s, delay: 1s}\n" + TASK))
                .containsExactly(
                        new Violation("spec.restartPolicy.interval", "\"4s\" is shorter than the minimum of 5s"));
    }

    @Test
    void attemptsTimesDelayFitsTheInterval() {
        assertThat(validate("nodeName: n\nrestartPolicy: {attempts: 3, interval: 10s, delay: 5s}\n" + TASK))
                .containsExactly(
                        new Violation(
                                "spec.restartPolicy",
                                "attempts × delay (3 × 5s) is longer than the interval 10s; lengthen the interval, or lower attempts or delay"));
    }

    @Test
    void crossFieldRulesApplyToTheEffectivePolicyWithDefaults() {
        // Service defaults: 2 attempts, 15s delay; an interval of 20s cannot hold 30s of delays.
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock, restartPolicy: {interval: 20s}}]\n"))
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].restartPolicy");
    }

    @Test
    void attemptsNotNegative() {
        assertThat(validate("nodeName: n\nrestartPolicy: {attempts: -1}\n" + TASK))
                .contains(new Violation("spec.restartPolicy.attempts", "-1 is negative; use 0 for no restarts"));
    }

    @Test
    void deviceCountAtLeastOneAndNameWellFormed() {
        assertThat(
                        validate(
                                "nodeName: n\ntasks: [{name: a, driver: mock, resources: {devices: [{name: nvidia/gpu, count: 0}, {name: a/b/c/d}]}}]\n"))
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].resources.devices[0].count", "spec.tasks[0].resources.devices[1].name");
    }

    @Test
    void ephemeralDiskSizePositive() {
        assertThat(validate("nodeName: n\nephemeralDisk: {sizeMB: 0}\n" + TASK))
                .containsExactly(new Violation("spec.ephemeralDisk.sizeMB", "0 is too small; give at least 1 (MB)"));
    }

    @Test
    void aUserIsALoginNameOrAUidAndNothingAShellOrPathCouldRead() {
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: exec, user: nobody},"
                        + " {name: b, driver: exec, user: '65534'}, {name: c, driver: raw_exec, user: _svc-1}]\n"))
                .isEmpty();
        for (String bad : List.of(
                "-u0", "root;id", "../etc", "Root", "a".repeat(33), "4294967295", "99999999999", "nobody ", "")) {
            assertThat(validate("nodeName: n\ntasks: [{name: a, driver: exec, user: '" + bad + "'}]\n"))
                    .as(bad)
                    .extracting(Violation::path)
                    .containsExactly("spec.tasks[0].user");
        }
    }

    @Test
    void envNamesValid() {
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock, env: [{name: 1BAD, value: x}]}]\n"))
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].env[0].name");
    }

    @Test
    void previousAllocationIsANameAndNotItself() {
        assertThat(validate("nodeName: n\npreviousAllocation: me\n" + TASK))
                .containsExactly(new Violation(
                        "spec.previousAllocation", "names this allocation itself; name the one it replaces"));
        assertThat(validate("nodeName: n\npreviousAllocation: ../x\n" + TASK))
                .extracting(Violation::path)
                .containsExactly("spec.previousAllocation");
    }

    @Test
    void lifecycleNeedsAHook() {
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock, lifecycle: {sidecar: true}}]\n"))
                .containsExactly(new Violation(
                        "spec.tasks[0].lifecycle.hook",
                        "is required when lifecycle is given (Prestart, Poststart or Poststop)"));
    }

    @Test
    void killSignalIsASignalName() {
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock, killSignal: 'kill -9'}]\n"))
                .extracting(Violation::path)
                .containsExactly("spec.tasks[0].killSignal");
    }

    /** A well-formed name of no signal (SIGFOO) was accepted, and only the kill found out. */
    @Test
    void killSignalMustBeAKnownSignal() {
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock, killSignal: SIGFOO}]\n"))
                .extracting(Violation::message)
                .containsExactly("\"SIGFOO\" is not a signal name (e.g. SIGTERM, SIGINT)");
        assertThat(validate("nodeName: n\ntasks: [{name: a, driver: mock, killSignal: SIGHUP}, {name: b, driver: mock,"
                        + " killSignal: INT}]\n"))
                .isEmpty();
    }

    /** A hostile value is named in the message, not copied into it whole or with its control characters. */
    @Test
    void longOrControlCharacterValuesAreQuotedCutAndEscaped() {
        String huge = "x".repeat(5000);
        assertThat(validate("nodeName: n\ntasks: [{name: " + huge + ", driver: mock}]\n"))
                .extracting(Violation::message)
                .singleElement()
                .asString()
                .startsWith("\"" + "x".repeat(dev.drover.common.UserText.LIMIT) + "\"... (5000 characters) is not")
                .hasSizeLessThan(400);
        assertThat(validate("nodeName: n\ntasks: [{name: \"a\\0b\", driver: mock}]\n"))
                .extracting(Violation::message)
                .singleElement()
                .asString()
                .startsWith("\"a\\u0000b\"");
    }

    @Test
    void volumesAreNamedByUniqueLabelsAndNameAHostVolume() {
        assertThat(validate("nodeName: n\nvolumes: [{name: data, hostVolume: shared-data}, {name: cache, hostVolume:"
                        + " cache}]\n" + TASK))
                .isEmpty();
        assertThat(validate("nodeName: n\nvolumes: [{name: data, hostVolume: a}, {name: data, hostVolume: b},"
                        + " {name: Data_1, hostVolume: \"/srv\"}, {name: x}]\n" + TASK))
                .containsExactly(
                        new Violation(
                                "spec.volumes[1].name",
                                "\"data\" is used by another volume; volume names must be unique"),
                        new Violation(
                                "spec.volumes[2].name",
                                "\"Data_1\" is not a DNS-1123 label (lower-case letters, digits and '-', at most 63"
                                        + " characters)"),
                        new Violation(
                                "spec.volumes[2].hostVolume",
                                "\"/srv\" is not a host volume name (a DNS-1123 label, as the agent's hostVolumes"
                                        + " names them)"),
                        new Violation(
                                "spec.volumes[3].hostVolume",
                                "(none) is not a host volume name (a DNS-1123 label, as the agent's hostVolumes names"
                                        + " them)"));
    }

    @Test
    void atMost32Volumes() {
        String volumes = IntStream.range(0, 33)
                .mapToObj(i -> "{name: v" + i + ", hostVolume: h}")
                .collect(Collectors.joining(", ", "volumes: [", "]\n"));
        assertThat(validate("nodeName: n\n" + volumes + TASK))
                .containsExactly(new Violation("spec.volumes", "has 33 volumes; at most 32 are allowed"));
    }

    @Test
    void reportsEveryViolationAtOnce() {
        assertThat(validate("tasks: [{name: A}, {name: b, driver: mock, killTimeout: x}]\n"))
                .hasSize(4);
    }
}
