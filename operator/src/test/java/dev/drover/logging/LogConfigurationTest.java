package dev.drover.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.ClassicConstants;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

class LogConfigurationTest {

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private final LoggerContext context = new LoggerContext();
    private PrintStream stderr;

    @BeforeEach
    void captureStderr() {
        stderr = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        context.setMDCAdapter(MDC.getMDCAdapter()); // as logback's SLF4J provider gives the context it starts
        LogConfiguration.apply(context);
    }

    @AfterEach
    void restoreStderr() {
        context.stop();
        System.setErr(stderr);
        MDC.clear();
    }

    private String lines() {
        return captured.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aRunnerLineNamesItsAllocationAndTask() {
        MDC.put("alloc", "default/hello");
        MDC.put("task", "web");
        context.getLogger("dev.drover.taskrunner.TaskRunner").info("reattached to task default/hello/web");

        assertThat(lines())
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) INFO  TaskRunner"
                        + " alloc=default/hello task=web - reattached to task default/hello/web\\R");
    }

    @Test
    void aLineWithoutAllocationOrTaskNamesNeither() {
        context.getLogger("dev.drover.agent.Agent").warn("node not ready");

        assertThat(lines()).endsWith(" WARN  Agent - node not ready" + System.lineSeparator());
    }

    @Test
    void librariesSayOnlyTheirWarnings() {
        context.getLogger("io.fabric8.kubernetes.client.Config").info("trying the kubeconfig");
        context.getLogger("io.javaoperatorsdk.operator.Operator").info("started");
        context.getLogger("io.fabric8.kubernetes.client.Watcher").warn("watch closed");
        context.getLogger("dev.drover.agent.Agent").info("started");

        assertThat(lines())
                .doesNotContain("trying the kubeconfig")
                .doesNotContain("Operator - started")
                .contains("WARN  Watcher - watch closed")
                .contains("INFO  Agent - started");
    }

    @Test
    void anExplicitConfigurationFileIsLeftToLogback() {
        String before = System.getProperty(ClassicConstants.CONFIG_FILE_PROPERTY);
        System.setProperty(ClassicConstants.CONFIG_FILE_PROPERTY, "/etc/drover/logback.xml");
        try {
            LogConfiguration configuration = new LogConfiguration();
            configuration.setContext(new LoggerContext());
            assertThat(configuration.configure(new LoggerContext())).isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
        } finally {
            if (before == null) {
                System.clearProperty(ClassicConstants.CONFIG_FILE_PROPERTY);
            } else {
                System.setProperty(ClassicConstants.CONFIG_FILE_PROPERTY, before);
            }
        }
    }
}
