package dev.drover.driver.oci;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the agent finds whether its containers get overlays or copies. */
class OverlayCheckTest {

    private static final String WITH_OVERLAY = "nodev\tsysfs\nnodev\tproc\n\text4\nnodev\toverlay\n\tbtrfs\n";
    private static final String WITHOUT = "nodev\tsysfs\nnodev\tproc\n\text4\nnodev\toverlayish\n\txfs\n";

    @TempDir
    Path dir;

    @Test
    void theKernelsListNamesOverlayOnlyAsAWholeName() {
        assertThat(OverlayCheck.listed(WITH_OVERLAY)).isTrue();
        assertThat(OverlayCheck.listed(WITHOUT)).isFalse();
        assertThat(OverlayCheck.listed("")).isFalse();
    }

    @Test
    void aTrialMountThatWorksMeansOverlaysWhatTheListSays() {
        for (String list : new String[] {WITH_OVERLAY, WITHOUT}) {
            assertThat(OverlayCheck.decide(list, Optional.empty(), dir))
                    .as("a module loaded by the mount, or built in")
                    .isEqualTo(new OverlayCheck.Detected(RootfsMode.OVERLAY, Optional.empty()));
        }
    }

    @Test
    void aFailedTrialMeansCopiesSayingWhetherTheKernelOrTheDiskIsToBlame() {
        OverlayCheck.Detected none =
                OverlayCheck.decide(WITHOUT, Optional.of("mount: unknown filesystem type 'overlay'"), dir);
        assertThat(none.mode()).isEqualTo(RootfsMode.COPY);
        assertThat(none.why())
                .contains("the kernel has no overlayfs (not in /proc/filesystems, and a trial mount, which would have"
                        + " loaded its module, failed: mount: unknown filesystem type 'overlay')");

        OverlayCheck.Detected disk = OverlayCheck.decide(WITH_OVERLAY, Optional.of("wrong fs type, bad option"), dir);
        assertThat(disk.mode()).isEqualTo(RootfsMode.COPY);
        assertThat(disk.why().orElseThrow())
                .startsWith("the kernel has overlayfs, but a trial overlay mount on the data dir's disk (" + dir)
                .endsWith("failed, perhaps for its filesystem: wrong fs type, bad option");
    }

    @Test
    void theTrialMountsOnThisNodeAndLeavesNothingBehind() throws Exception {
        Path scratch = dir.resolve("check");
        assertThat(OverlayCheck.tryMount(scratch))
                .as("overlayfs works here, as the oci tests need")
                .isEmpty();
        assertThat(scratch).doesNotExist();
        assertThat(java.nio.file.Files.readString(Path.of("/proc/self/mountinfo")))
                .doesNotContain(scratch.toString());
        assertThat(OverlayCheck.detect(dir.resolve("again")).mode()).isEqualTo(RootfsMode.OVERLAY);
        assertThat(OverlayCheck.tryMount(Path.of("/proc/drover-check")).orElseThrow())
                .startsWith("cannot try: ");
    }

    @Test
    void theSettingNamesOverlayOrCopy() {
        assertThat(RootfsMode.parse("overlay")).contains(RootfsMode.OVERLAY);
        assertThat(RootfsMode.parse("copy")).contains(RootfsMode.COPY);
        assertThat(RootfsMode.parse("auto")).isEmpty();
        assertThat(RootfsMode.parse("COPY")).isEmpty();
    }
}
