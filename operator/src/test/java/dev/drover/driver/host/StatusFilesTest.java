package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.driver.ExitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading the exit file: the monitor's exact form, and the shell supervisor's bare number of older tasks. */
class StatusFilesTest {

    @TempDir
    Path dir;

    @Test
    void theMonitorsFormTellsExit130FromSigint() {
        assertThat(StatusFiles.parseExit("exit 130\n")).contains(new ExitResult(130, null, null));
        assertThat(StatusFiles.parseExit("signal 2\n")).contains(new ExitResult(130, "SIGINT", null));
        assertThat(StatusFiles.parseExit("exit 0\n")).contains(ExitResult.code(0));
        assertThat(StatusFiles.parseExit("signal 11 core\n")).contains(ExitResult.signalled("SIGSEGV"));
    }

    @Test
    void aSignalWithoutANameIsReportedByNumber() {
        assertThat(StatusFiles.parseExit("signal 34")).contains(new ExitResult(162, "SIG34", null));
    }

    @Test
    void theShellSupervisorsBareNumberOfAnOlderTaskStillReads() {
        assertThat(StatusFiles.parseExit("0\n")).contains(ExitResult.code(0));
        assertThat(StatusFiles.parseExit("3\n")).contains(ExitResult.code(3));
        assertThat(StatusFiles.parseExit("143\n")).contains(ExitResult.signalled("SIGTERM"));
    }

    @Test
    void anythingElseIsNoExitStatus() {
        for (String text : new String[] {
            "", "exit", "exit 256", "exit -1", "signal 0", "signal 65", "signal 2 dump", "exit 1 core", "quit 1", "x"
        }) {
            assertThat(StatusFiles.parseExit(text)).as(text).isEmpty();
        }
    }

    @Test
    void anUnreadableFileIsALostTaskSayingWhatItHeldCutAndEscaped() throws Exception {
        Path exit = dir.resolve("exit");
        Files.writeString(exit, "exit \u001b[31m" + "9".repeat(10_000));
        ExitResult r = StatusFiles.readExit(exit);
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.error())
                .contains("without recording an exit status")
                .doesNotContain("\u001b")
                .hasSizeLessThan(400);
        assertThat(StatusFiles.readExit(dir.resolve("none")).error()).contains("without recording");
    }
}
