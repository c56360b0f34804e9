package dev.drover.taskrunner.checks;

import static dev.drover.api.v1alpha1.CheckStatus.Status.CRITICAL;
import static dev.drover.api.v1alpha1.CheckStatus.Status.PASSING;
import static dev.drover.api.v1alpha1.CheckStatus.Status.WARNING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.Check;
import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.api.v1alpha1.CheckType;
import dev.drover.driver.DriverException;
import dev.drover.driver.ExecRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ExecProbeTest {

    final ExecProbe probe = new ExecProbe();
    final List<ExecRequest> started = new ArrayList<>();

    static Check check(String timeout) {
        Check c = new Check("ready", CheckType.EXEC);
        c.setCommand("/bin/check");
        c.setArgs(List.of("--deep", "a b"));
        c.setTimeout(timeout);
        return c;
    }

    ProbeResult run(Check check, FakeExecProcess process) throws InterruptedException {
        return probe.run(check, request -> {
            started.add(request);
            return process;
        });
    }

    @Test
    void exitZeroPassesWithItsOutput() throws Exception {
        FakeExecProcess process = FakeExecProcess.exited(0, "ready\n", "");
        assertThat(run(check("2s"), process)).isEqualTo(new ProbeResult(PASSING, "ready"));
        assertThat(started).containsExactly(new ExecRequest(List.of("/bin/check", "--deep", "a b"), false, false));
        assertThat(process.isClosed()).isTrue();
    }

    @Test
    void exitOneWarns() throws Exception {
        assertThat(run(check("2s"), FakeExecProcess.exited(1, "", "queue is long")))
                .isEqualTo(new ProbeResult(WARNING, "exit code 1: queue is long"));
    }

    @Test
    void otherExitIsCriticalAndSaysTheCode() throws Exception {
        assertThat(run(check("2s"), FakeExecProcess.exited(2, "", "")))
                .isEqualTo(new ProbeResult(CRITICAL, "exit code 2"));
    }

    @Test
    void outputAndErrorsAreReadTogether() throws Exception {
        ProbeResult result = run(check("2s"), FakeExecProcess.exited(3, "out-part", "err-part"));
        assertThat(result.output())
                .startsWith("exit code 3: ")
                .contains("out-part")
                .contains("err-part");
    }

    @Test
    void commandThatDoesNotExitInTimeIsKilledAndCritical() throws Exception {
        FakeExecProcess hanging = FakeExecProcess.hanging();
        long start = System.nanoTime();
        assertThat(run(check("200ms"), hanging)).isEqualTo(new ProbeResult(CRITICAL, "timed out after 200ms"));
        assertThat(hanging.isClosed()).isTrue();
        assertThat((System.nanoTime() - start) / 1_000_000).isBetween(150L, 3000L);
    }

    @Test
    void hugeOutputIsDrainedButOnlyItsStartKept() throws Exception {
        AtomicLong read = new AtomicLong();
        long total = 256L * 1024 * 1024;
        FakeExecProcess process = new FakeExecProcess(FakeExecProcess.endless(total, read), FakeExecProcess.text(""));
        process.exit.complete(0);
        ProbeResult result = run(check("10s"), process);
        assertThat(result.status()).isEqualTo(PASSING);
        assertThat(result.output()).startsWith("yyyy").hasSizeLessThanOrEqualTo(CheckStatus.MAX_OUTPUT);
        assertThat(read.get()).isEqualTo(total); // read to its end: a writing command never blocks on a full pipe
    }

    @Test
    void failingCommandsHugeOutputIsCutWithItsCode() throws Exception {
        FakeExecProcess process =
                new FakeExecProcess(FakeExecProcess.endless(1024 * 1024, new AtomicLong()), FakeExecProcess.text(""));
        process.exit.complete(2);
        ProbeResult result = run(check("10s"), process);
        assertThat(result.status()).isEqualTo(CRITICAL);
        assertThat(result.output()).startsWith("exit code 2: yyyy").hasSizeLessThanOrEqualTo(CheckStatus.MAX_OUTPUT);
    }

    @Test
    void driverFailureIsCriticalWithItsMessage() throws Exception {
        ProbeResult result = probe.run(check("2s"), request -> {
            throw new DriverException("the task is not running");
        });
        assertThat(result).isEqualTo(new ProbeResult(CRITICAL, "cannot run \"/bin/check\": the task is not running"));
    }

    @Test
    void commandTheDriverCannotBeGivenIsCritical() throws Exception {
        Check c = check("2s");
        c.setArgs(List.of("a\0b"));
        ProbeResult result = run(c, FakeExecProcess.exited(0, "", ""));
        assertThat(result.status()).isEqualTo(CRITICAL);
        assertThat(result.output())
                .startsWith("cannot run the check's command: ")
                .contains("NUL");
        assertThat(started).isEmpty();
    }

    @Test
    void controlCharactersOfTheOutputNeverReachIt() throws Exception {
        assertThat(run(check("2s"), FakeExecProcess.exited(0, "\u001b[32mok\u001b[0m\r\ndone\u0007", ""))
                        .output())
                .isEqualTo("\uFFFD[32mok\uFFFD[0m  done\uFFFD");
    }

    @Test
    void aReaderOfOutputThatOutlivesTheCommandIsEndedWithTheProbe() throws Exception {
        CountDownLatch ended = new CountDownLatch(1);

        ProbeResult result = run(check("300ms"), FakeExecProcess.outlived("ok\n", ended));

        assertThat(result).isEqualTo(new ProbeResult(PASSING, "ok"));
        assertThat(ended.await(5, TimeUnit.SECONDS))
                .as("the reader gives up once the probe has returned")
                .isTrue();
    }

    @Test
    void interruptedProbeClosesTheCommand() throws Exception {
        FakeExecProcess hanging = FakeExecProcess.hanging();
        Thread.currentThread().interrupt();
        try {
            probe.run(check("10s"), request -> hanging);
            throw new AssertionError("an interrupted probe must give way");
        } catch (InterruptedException expected) {
            assertThat(hanging.isClosed()).isTrue();
        }
    }
}
