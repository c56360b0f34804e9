package dev.drover.taskrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.api.v1alpha1.Allocation;
import dev.drover.api.v1alpha1.AllocationSpec;
import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskMount;
import dev.drover.state.AllocId;
import dev.drover.taskrunner.hooks.VolumeMountHook;
import dev.drover.volumes.HostVolume;
import dev.drover.volumes.HostVolumes;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A task's volumeMounts become the host directories its driver binds, read-only where either side says so. */
class VolumeMountHookTest {

    private static final AllocId ALLOC = new AllocId("team", "a");

    @TempDir
    Path dir;

    private Path models;
    private Path scratch;
    private VolumeMountHook hook;

    @BeforeEach
    void volumes() throws Exception {
        models = Files.createDirectories(dir.resolve("models"));
        scratch = Files.createDirectories(dir.resolve("scratch"));
        hook = new VolumeMountHook(new HostVolumes(List.of(
                new HostVolume("models", models, true, Set.of("*")),
                new HostVolume("scratch", scratch, false, Set.of("team")),
                new HostVolume("elsewhere", scratch, false, Set.of("other")))));
    }

    private static AllocationSpec spec(String yaml) {
        return Serialization.unmarshal(
                        "apiVersion: drover.dev/v1alpha1\nkind: Allocation\nmetadata: {name: a, namespace: team}\n"
                                + "spec:\n  nodeName: n\n" + yaml.indent(2),
                        Allocation.class)
                .getSpec();
    }

    private TaskHookContext prestart(AllocationSpec spec) throws TaskHookException {
        TaskConfig template = new TaskConfig(
                "team",
                "a",
                "web",
                Map.of(),
                Map.of(),
                dir.resolve("alloc"),
                dir.resolve("web"),
                dir.resolve("logs"),
                dir.resolve("web/secrets"),
                null,
                null);
        TaskHookContext ctx =
                new TaskHookContext(ALLOC, spec.getTasks().get(0), spec, template, Clock.systemUTC(), e -> {});
        hook.prestart(ctx);
        return ctx;
    }

    @Test
    void eachMountBecomesItsHostVolumesDirectoryReadOnlyWhereTheVolumeOrTheMountSaysSo() throws Exception {
        TaskHookContext ctx = prestart(spec("""
                volumes: [{name: weights, hostVolume: models}, {name: tmp, hostVolume: scratch}]
                tasks:
                - name: web
                  driver: oci
                  config:
                    image: busybox:1
                    volumeMounts:
                    - {volume: weights, destination: /models}
                    - {volume: tmp, destination: /scratch}
                    - {volume: tmp, destination: /frozen, readOnly: true}
                """));
        assertThat(ctx.taskConfig().attachments().mounts())
                .containsExactly(
                        new TaskMount(models, "/models", true),
                        new TaskMount(scratch, "/scratch", false),
                        new TaskMount(scratch, "/frozen", true));
    }

    @Test
    void aMountOfAVolumeTheSpecDoesNotNameFailsValidationNamingIt() {
        assertThatThrownBy(() -> prestart(spec("""
                        volumes: [{name: weights, hostVolume: models}]
                        tasks:
                        - name: web
                          driver: oci
                          config: {image: busybox:1, volumeMounts: [{volume: wieghts, destination: /models}]}
                        """)))
                .isInstanceOfSatisfying(
                        TaskHookException.class,
                        e -> assertThat(e.eventType()).isEqualTo(TaskEventType.FailedValidation))
                .hasMessage("config.volumeMounts[0].volume: \"wieghts\" is not a volume of spec.volumes (it has"
                        + " weights)");
    }

    @Test
    void aHostVolumeNoLongerLentOrNoLongerADirectoryFailsTheSetup() throws Exception {
        assertThatThrownBy(() -> prestart(spec("""
                        volumes: [{name: x, hostVolume: elsewhere}]
                        tasks: [{name: web, driver: oci, config: {image: b, volumeMounts: [{volume: x, destination: /x}]}}]
                        """)))
                .isInstanceOfSatisfying(
                        TaskHookException.class, e -> assertThat(e.eventType()).isEqualTo(TaskEventType.SetupFailure))
                .hasMessage("volume \"x\": host volume \"elsewhere\" no longer lets namespace \"team\" use it");
        Files.delete(models);
        Files.createSymbolicLink(models, scratch);
        assertThatThrownBy(() -> prestart(spec("""
                        volumes: [{name: m, hostVolume: models}]
                        tasks: [{name: web, driver: oci, config: {image: b, volumeMounts: [{volume: m, destination: /m}]}}]
                        """)))
                .isInstanceOf(TaskHookException.class)
                .hasMessage(
                        "host volume \"models\": " + models + " is no longer a directory (or is now a symbolic link)");
    }

    @Test
    void aTaskWithoutVolumeMountsIsLentNothing() throws Exception {
        TaskHookContext ctx = prestart(spec("tasks: [{name: web, driver: mock}]\n"));
        assertThat(ctx.taskConfig().attachments().mounts()).isEmpty();
    }
}
