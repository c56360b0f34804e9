package dev.drover.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.Signals;
import dev.drover.driver.mock.MockDriver;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;

class DriverRegistryTest {

    @Test
    void rawExecIsOffUnlessEnabledAndSaysHowToEnableIt() {
        try (DriverRegistry registry = new DriverRegistry(List.of(new MockDriver(Clock.systemUTC())))) {
            assertThat(registry.find("mock")).isPresent();
            assertThat(registry.unavailable("mock")).isEmpty();
            assertThat(registry.unavailable("raw_exec"))
                    .get()
                    .asString()
                    .startsWith("raw_exec is disabled on this agent; start the agent with --enable-raw-exec");
            assertThat(registry.unavailable("exec"))
                    .get()
                    .asString()
                    .startsWith("exec is disabled on this agent; start the agent with --enable-exec");
            assertThat(registry.unavailable("docker"))
                    .contains("unknown driver \"docker\" (known: mock, raw_exec, exec)");
        }
    }

    @Test
    void signalNamesAreCanonical() {
        assertThat(Signals.canonical("term")).isEqualTo("SIGTERM");
        assertThat(Signals.number("SIGKILL")).isEqualTo(9);
        assertThat(Signals.name(2)).isEqualTo("SIGINT");
        assertThat(ExitResult.signalled("SIGTERM").exitCode()).isEqualTo(143);
    }
}
