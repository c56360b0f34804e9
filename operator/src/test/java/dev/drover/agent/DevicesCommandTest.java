package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.deviceplugin.DevicePlugins;
import dev.drover.deviceplugin.PluginClock;
import dev.drover.deviceplugin.fake.FakePluginFactory;
import dev.drover.testing.LiveThreads;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DevicesCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String T4 = "GPU-8a3c5e1f-2b4d-4c6e-9f70-1a2b3c4d5e6f";
    private static final String SICK = "GPU-5d7e9a0b-6c1f-4e2a-8b3d-9c0e1f2a3b4c";
    private static final String MIG = "MIG-0aaaaaaa-1111-2222-3333-444444444444";
    private static final String A100 = "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";

    /** Two T4s (one unhealthy, its description and the model holding escape sequences) and a MIG device. */
    private static final String DEVICES = """
            groups:
              - vendor: nvidia
                type: gpu
                model: "Tesla \\e[31mT4"
                attributes:
                  memory: 15360 MiB
                  power_limit: 70 W
                  compute_capability: "7.5"
                  ecc: true
                instances:
                  - id: %s
                    pciBusId: "00000000:00:1E.0"
                    gpuIndex: 0
                    stats: {gpuUtilPercent: 37, memUtilPercent: 12, memoryUsedMiB: 2048, memoryTotalMiB: 15360,
                            temperatureC: 48, powerW: 31.5, eccErrorsCorrected: 0, eccErrorsUncorrected: 1,
                            smClockMHz: 1590, memoryClockMHz: 5000}
                  - id: %s
                    pciBusId: "00000000:00:1F.0"
                    gpuIndex: 1
                    healthy: false
                    healthDescription: "XID 79: \\e[2Jfallen off the bus"
                    stats: {temperatureC: 34}
              - vendor: nvidia
                type: gpu
                model: NVIDIA A100-SXM4-40GB MIG 3g.20gb
                attributes:
                  memory: 19968 MiB
                instances:
                  - id: %s
                    pciBusId: "00000000:00:20.0"
                    gpuIndex: 2
                    migParent: %s
                    gpuInstanceId: 1
            """.formatted(T4, SICK, MIG, A100);

    @TempDir
    Path dir;

    private Path devices;
    private Set<Long> threadsBefore;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();

    @BeforeEach
    void writeDevices() throws Exception {
        devices = Files.writeString(dir.resolve("gpus.yaml"), DEVICES);
        threadsBefore = LiveThreads.ids(LiveThreads.now());
    }

    /** Every command closes its plugins and joins their threads before it returns. */
    @AfterEach
    void noThreadLeft() {
        assertThat(LiveThreads.startedSince(threadsBefore, t -> false)).isEmpty();
    }

    private int run(Map<String, String> env, String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "devices";
        System.arraycopy(args, 0, all, 1, args.length);
        return Main.run(all, env, print(stdout), print(stderr));
    }

    private int run(String... args) {
        return run(Map.of(), args);
    }

    private static PrintStream print(OutputStream to) {
        return new PrintStream(to, true, StandardCharsets.UTF_8);
    }

    private String out() {
        return stdout.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return stderr.toString(StandardCharsets.UTF_8);
    }

    private JsonNode json() throws Exception {
        return JSON.readTree(out());
    }

    private String fake() {
        return "fake:" + devices;
    }

    @Test
    void textShowsEachGroupWithItsAttributesAndEachInstanceWithItsHealthAndPlace() {
        assertThat(run("--device-plugin", fake())).isZero();
        String out = out();
        assertThat(out)
                .startsWith("plugin fake 1 (file=" + devices + ")\n")
                .contains("  nvidia/gpu/Tesla \\u001B[31mT4\n")
                .containsPattern("\\n {4}memory +15360 MiB\\n")
                .containsPattern("\\n {4}power_limit +70 W\\n")
                .containsPattern("\\n {4}compute_capability +7\\.5\\n")
                .containsPattern("\\n {4}ecc +true\\n")
                .containsPattern("INSTANCE +HEALTH +PCI BUS ID +GPU +DESCRIPTION")
                .containsPattern(T4 + " +healthy +00000000:00:1E\\.0 +0\\n")
                .containsPattern(
                        SICK + " +unhealthy +00000000:00:1F\\.0 +1 +XID 79: \\\\u001B\\[2Jfallen off the bus\\n")
                .containsPattern("INSTANCE +HEALTH +PCI BUS ID +GPU +MIG +DESCRIPTION")
                .containsPattern(MIG + " +healthy +00000000:00:20\\.0 +2 +GI 1 of " + A100 + "\\n")
                .doesNotContain("\u001b") // a plugin's text cannot drive the terminal
                .doesNotContain("GPU UTIL"); // no stats unless asked
        assertThat(err()).isEmpty();
    }

    @Test
    void jsonNamesEveryFieldForScripts() throws Exception {
        assertThat(run("--device-plugin", fake(), "-o", "json")).isZero();
        JsonNode plugin = json().get("plugins").get(0);
        assertThat(plugin.get("name").asText()).isEqualTo("fake");
        assertThat(plugin.get("version").asText()).isEqualTo("1");
        assertThat(plugin.get("config").get("file").asText()).isEqualTo(devices.toString());
        assertThat(plugin.has("error")).isFalse();
        assertThat(plugin.has("unavailableReason")).isFalse();
        assertThat(plugin.get("groups")).hasSize(2);

        JsonNode t4 = plugin.get("groups").get(0);
        assertThat(t4.get("id").asText()).isEqualTo("nvidia/gpu/Tesla \u001b[31mT4");
        assertThat(t4.get("vendor").asText()).isEqualTo("nvidia");
        assertThat(t4.get("type").asText()).isEqualTo("gpu");
        assertThat(t4.get("model").asText()).isEqualTo("Tesla \u001b[31mT4");
        JsonNode memory = t4.get("attributes").get("memory");
        assertThat(memory.get("value").isIntegralNumber()).isTrue();
        assertThat(memory.get("value").asLong()).isEqualTo(15360);
        assertThat(memory.get("unit").asText()).isEqualTo("MiB");
        assertThat(memory.get("display").asText()).isEqualTo("15360 MiB");
        assertThat(t4.get("attributes").get("power_limit").get("unit").asText()).isEqualTo("W");
        JsonNode cc = t4.get("attributes").get("compute_capability");
        assertThat(cc.get("value").isTextual()).isTrue();
        assertThat(cc.get("value").asText()).isEqualTo("7.5");
        assertThat(cc.has("unit")).isFalse();
        assertThat(t4.get("attributes").get("ecc").get("value").isBoolean()).isTrue();

        JsonNode healthy = t4.get("instances").get(0);
        assertThat(healthy.get("id").asText()).isEqualTo(T4);
        assertThat(healthy.get("healthy").asBoolean()).isTrue();
        assertThat(healthy.get("healthDescription").asText()).isEmpty();
        assertThat(healthy.get("pciBusId").asText()).isEqualTo("00000000:00:1E.0");
        assertThat(healthy.get("gpuIndex").asInt()).isZero();
        assertThat(healthy.get("gpuUuid").asText()).isEqualTo(T4);
        assertThat(healthy.has("migParent")).isFalse();
        assertThat(healthy.has("gpuInstanceId")).isFalse();
        assertThat(healthy.has("stats")).isFalse();
        JsonNode sick = t4.get("instances").get(1);
        assertThat(sick.get("healthy").asBoolean()).isFalse();
        assertThat(sick.get("healthDescription").asText()).isEqualTo("XID 79: \u001b[2Jfallen off the bus");

        JsonNode mig = plugin.get("groups").get(1).get("instances").get(0);
        assertThat(mig.get("id").asText()).isEqualTo(MIG);
        assertThat(mig.get("gpuIndex").asInt()).isEqualTo(2);
        assertThat(mig.get("gpuUuid").asText()).isEqualTo(A100);
        assertThat(mig.get("migParent").asText()).isEqualTo(A100);
        assertThat(mig.get("gpuInstanceId").asInt()).isEqualTo(1);
    }

    @Test
    void statsShowOneSamplePerInstanceWithUnitsAndLeaveOutWhatIsNotReported() throws Exception {
        assertThat(run("--device-plugin", fake(), "--stats")).isZero();
        assertThat(out())
                .containsPattern(
                        "INSTANCE +GPU UTIL +MEM UTIL +MEMORY USED/TOTAL +TEMP +POWER +ECC CORR/UNCORR +SM CLOCK +MEM CLOCK")
                .containsPattern(T4 + " +37 % +12 % +2048/15360 MiB +48 C +31\\.5 W +0/1 +1590 MHz +5000 MHz\\n")
                .containsPattern(SICK + " +- +- +- +34 C +- +- +- +-\\n")
                .containsPattern(MIG + " +no sample\\n");

        stdout.reset();
        assertThat(run("--device-plugin", fake(), "--stats", "-o", "json")).isZero();
        JsonNode instances = json().get("plugins").get(0).get("groups").get(0).get("instances");
        JsonNode t4 = instances.get(0).get("stats");
        assertThat(Instant.parse(t4.get("timestamp").asText()))
                .isBefore(Instant.now().plusSeconds(1));
        assertThat(t4.get("gpuUtilPercent").asDouble()).isEqualTo(37.0);
        assertThat(t4.get("memUtilPercent").asDouble()).isEqualTo(12.0);
        assertThat(t4.get("memoryUsedMiB").asLong()).isEqualTo(2048);
        assertThat(t4.get("memoryTotalMiB").asLong()).isEqualTo(15360);
        assertThat(t4.get("temperatureC").asDouble()).isEqualTo(48.0);
        assertThat(t4.get("powerW").asDouble()).isEqualTo(31.5);
        assertThat(t4.get("eccErrorsCorrected").asLong()).isZero();
        assertThat(t4.get("eccErrorsUncorrected").asLong()).isEqualTo(1);
        assertThat(t4.get("smClockMHz").asLong()).isEqualTo(1590);
        assertThat(t4.get("memoryClockMHz").asLong()).isEqualTo(5000);
        JsonNode sick = instances.get(1).get("stats");
        assertThat(sick.get("temperatureC").asDouble()).isEqualTo(34.0);
        assertThat(sick.has("powerW")).as("not reported: left out, never 0").isFalse();
        assertThat(sick.has("gpuUtilPercent")).isFalse();
    }

    @Test
    void watchPrintsAHealthChangeAsItComesThenClosesThePlugin() throws Exception {
        Files.writeString(
                devices,
                DEVICES.replace(
                        "        stats: {temperatureC: 34}\n",
                        "        stats: {temperatureC: 34}\n"
                                + "      - id: GPU-later\n"
                                + "        gpuIndex: 3\n"
                                + "        unhealthy: [{from: 1h, reason: \"XID 48: double-bit ECC error\"}]\n"));
        JumpClock clock = new JumpClock();
        Thread command = runOnThread(clock, "--device-plugin", fake(), "--watch", "2s");
        assertThat(clock.firstWait.await(30, TimeUnit.SECONDS))
                .as("the watch waits for a change")
                .isTrue();
        clock.jump(Duration.ofHours(1)); // into the unhealthy window
        command.join(Duration.ofSeconds(60));
        assertThat(command.isAlive()).isFalse();

        assertThat(exit.get()).isZero();
        String out = out();
        assertThat(out).containsPattern("GPU-later +healthy +- +3\\n");
        assertThat(out).contains("\nwatching for 2s: each change as it comes\n");
        assertThat(out)
                .containsPattern("\\n\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ  fake  health  GPU-later  "
                        + "unhealthy: XID 48: double-bit ECC error \\(was healthy\\)\\n");
        assertThat(out).endsWith("watch ended after 2s: 1 change(s)\n");
        assertThat(err()).isEmpty();
    }

    @Test
    void watchInJsonPrintsEachChangeAsAnObjectOnALine() throws Exception {
        Files.writeString(
                devices,
                DEVICES.replace(
                        "healthy: false\n        healthDescription: \"XID 79: \\e[2Jfallen off the bus\"\n",
                        "unhealthy: [{from: 1h, until: 2h, reason: \"XID 79\"}]\n"));
        JumpClock clock = new JumpClock();
        Thread command = runOnThread(clock, "--device-plugin", fake(), "--watch", "2s", "-o", "json");
        assertThat(clock.firstWait.await(30, TimeUnit.SECONDS)).isTrue();
        clock.jump(Duration.ofMinutes(90));
        command.join(Duration.ofSeconds(60));
        assertThat(exit.get()).isZero();

        List<String> lines = out().lines().toList();
        JsonNode change = JSON.readTree(lines.getLast());
        assertThat(change.get("plugin").asText()).isEqualTo("fake");
        assertThat(change.get("change").asText()).isEqualTo("health");
        assertThat(change.get("group").asText()).isEqualTo("nvidia/gpu/Tesla \u001b[31mT4");
        assertThat(change.get("instance").get("id").asText()).isEqualTo(SICK);
        assertThat(change.get("instance").get("healthy").asBoolean()).isFalse();
        assertThat(change.get("instance").get("healthDescription").asText()).isEqualTo("XID 79");
        assertThat(change.get("detail").asText()).isEqualTo("healthy");
        assertThat(Instant.parse(change.get("time").asText())).isBefore(Instant.now());
        // the report before it is one JSON document of its own
        JsonNode report = JSON.readTree(String.join("\n", lines.subList(0, lines.size() - 1)));
        assertThat(report.get("plugins").get(0).get("groups")).hasSize(2);
    }

    private final AtomicInteger exit = new AtomicInteger(-1);

    private Thread runOnThread(JumpClock clock, String... args) {
        UnaryOperator<DevicePlugins.Selection> withClock =
                sel -> new DevicePlugins.Selection(new FakePluginFactory(clock), sel.config());
        return Thread.ofPlatform()
                .name("devices-command-test")
                .start(() -> exit.set(DevicesCommand.run(
                        args, Map.of(), print(stdout), print(stderr), Duration.ofSeconds(30), withClock)));
    }

    @Test
    void pluginsComeFromTheEnvironmentAndTheConfigurationFileAsTheAgentReadsThem() throws Exception {
        assertThat(run(Map.of("DROVER_DEVICE_PLUGINS", fake()), "-o", "json")).isZero();
        assertThat(json().get("plugins").get(0).get("groups").get(0).get("instances"))
                .hasSize(2);

        Path config = Files.writeString(dir.resolve("agent.yaml"), """
                devicePlugins: ["%s"]
                devicePluginConfig:
                  fake:
                    excludeDevices: [1]
                """.formatted(fake()));
        stdout.reset();
        assertThat(run(Map.of("DROVER_CONFIG", config.toString()), "-o", "json"))
                .isZero();
        JsonNode plugin = json().get("plugins").get(0);
        assertThat(plugin.get("config").get("excludeDevices").get(0).asInt()).isEqualTo(1);
        JsonNode t4s = plugin.get("groups").get(0).get("instances");
        assertThat(t4s).hasSize(1);
        assertThat(t4s.get(0).get("id").asText()).as("GPU 1 is left out").isEqualTo(T4);

        Path bad = Files.writeString(dir.resolve("bad.yaml"), """
                devicePluginConfig:
                  fake:
                    devices: [all]
                """);
        assertThat(run("--config", bad.toString(), "--device-plugin", fake())).isEqualTo(2);
        assertThat(err())
                .startsWith("drover-agent devices: devicePluginConfig.fake: ")
                .contains("\"all\"");
    }

    @Test
    void noPluginConfiguredExitsOneSayingHowToNameOne() {
        assertThat(run()).isEqualTo(1);
        assertThat(err())
                .isEqualTo("drover-agent devices: no device plugin is configured; name one with --device-plugin"
                        + " nvidia (or nvidia:LIBRARY, fake:FILE), DROVER_DEVICE_PLUGINS or devicePlugins in the"
                        + " --config file\n");
        assertThat(out()).isEmpty();
    }

    @Test
    void aPluginThatCannotStartExitsOneInOneSentence() {
        assertThat(run("--device-plugin", "fake:" + dir.resolve("missing.yaml")))
                .isEqualTo(1);
        assertThat(err())
                .startsWith("drover-agent devices: the fake plugin cannot start: ")
                .contains("missing.yaml")
                .hasLineCount(1);
        assertThat(out()).contains("plugin fake 1").contains("  error: the fake plugin cannot start: ");
    }

    @Test
    void aPluginThatSeesNoDevicesExitsOne() throws Exception {
        Path config = Files.writeString(dir.resolve("agent.yaml"), """
                devicePluginConfig:
                  fake:
                    devices: [7]
                """);
        Files.writeString(
                devices, DEVICES.substring(0, DEVICES.indexOf("  - vendor: nvidia\n    type: gpu\n    model: NVIDIA")));
        assertThat(run("--config", config.toString(), "--device-plugin", fake(), "-o", "json"))
                .isEqualTo(1);
        assertThat(err())
                .isEqualTo("drover-agent devices: the fake plugin sees no devices"
                        + " (are they all left out by devicePluginConfig.fake?)\n");
        JsonNode plugin = json().get("plugins").get(0);
        assertThat(plugin.get("error").asText()).startsWith("the fake plugin sees no devices");
        assertThat(plugin.get("groups")).isEmpty();
    }

    @Test
    void aFailingOrHangingCallExitsOneAndLeavesNoThread() throws Exception {
        Files.writeString(devices, DEVICES + "faults: [{fault: error, call: stats, message: \"sensor gone\"}]\n");
        assertThat(run("--device-plugin", fake(), "--stats")).isEqualTo(1);
        assertThat(err())
                .isEqualTo("drover-agent devices: the fake plugin stats failed: device plugin fake: sensor gone\n");

        Files.writeString(devices, DEVICES + "faults: [{fault: hang}]\n");
        stderr.reset();
        int code = DevicesCommand.run(
                new String[] {"--device-plugin", fake()},
                Map.of(),
                print(stdout),
                print(stderr),
                Duration.ofMillis(300),
                UnaryOperator.identity());
        assertThat(code).isEqualTo(1);
        assertThat(err())
                .isEqualTo("drover-agent devices: the fake plugin's fingerprint did not return within 300ms\n");
        // the hung call ended when the plugin was closed: @AfterEach finds no thread
    }

    @Test
    void usageErrorsExitTwoNamingWhatIsWrong() {
        assertThat(run("--device-plugin", fake(), "--colour")).isEqualTo(2);
        assertThat(err()).startsWith("drover-agent devices: unknown flag \"--colour\"\nusage: ");

        for (String[] args : List.of(
                new String[] {"-o", "yaml"},
                new String[] {"--watch", "forever"},
                new String[] {"--watch", "11m"},
                new String[] {"--watch", "0s"},
                new String[] {"gpus"},
                new String[] {"--device-plugin", "amd"},
                new String[] {"--watch"})) {
            stderr.reset();
            assertThat(run(args)).as(String.join(" ", args)).isEqualTo(2);
            assertThat(err()).as(String.join(" ", args)).startsWith("drover-agent devices: ");
        }
        stderr.reset();
        run("-o", "yaml");
        assertThat(err()).startsWith("drover-agent devices: -o \"yaml\" is not an output format: text or json\n");
        stderr.reset();
        run("--watch", "11m");
        assertThat(err()).startsWith("drover-agent devices: --watch \"11m\" must be longer than 0 and at most 10m\n");
        stderr.reset();
        run("--device-plugin", "amd");
        assertThat(err())
                .isEqualTo(
                        "drover-agent devices: --device-plugin amd: no device plugin named 'amd'; known: fake, nvidia\n");
        assertThat(out()).isEmpty();
    }

    @Test
    void helpPrintsTheFlagTable() {
        assertThat(run("--help")).isZero();
        assertThat(out())
                .startsWith("usage: java -jar drover-agent.jar devices ")
                .containsPattern("\\n +--device-plugin NAME\\[:ARG\\] +a plugin to run")
                .containsPattern("\\n +--config FILE +")
                .containsPattern("\\n +--stats +")
                .containsPattern("\\n +--watch DURATION +")
                .containsPattern("\\n +-o, --output FORMAT +text \\(default\\) or json")
                .containsPattern("\\n +-h, --help +");
        assertThat(err()).isEmpty();
    }

    /**
     * The wall clock moved on by {@link #jump} at once (every timed wait wakes to see it); {@link #firstWait} opens
     * when a plugin first waits on it, which the watch alone does.
     */
    private static final class JumpClock implements PluginClock {
        final CountDownLatch firstWait = new CountDownLatch(1);
        private final Set<List<Object>> waiters = ConcurrentHashMap.newKeySet();
        private volatile Duration offset = Duration.ZERO;

        @Override
        public Instant now() {
            return Instant.now().plus(offset);
        }

        void jump(Duration by) {
            offset = offset.plus(by);
            for (List<Object> w : new ArrayList<>(waiters)) {
                ReentrantLock lock = (ReentrantLock) w.get(0);
                lock.lock();
                try {
                    ((Condition) w.get(1)).signalAll();
                } finally {
                    lock.unlock();
                }
            }
        }

        @Override
        public void await(ReentrantLock lock, Condition condition, Instant deadline) throws InterruptedException {
            List<Object> waiter = List.of(lock, condition, new Object());
            waiters.add(waiter); // before the time check: a jump after it finds us
            firstWait.countDown();
            try {
                Duration left = Duration.between(now(), deadline);
                if (left.isPositive()) {
                    condition.awaitNanos(Math.min(left.toNanos(), TimeUnit.HOURS.toNanos(1)));
                }
            } finally {
                waiters.remove(waiter);
            }
        }
    }
}
