package dev.drover.e2e.chart;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.LintResult;
import org.junit.jupiter.api.Test;

class ChartLintTest {

    @Test
    void strictLintPasses() {
        LintResult lint = DroverChart.helm().lint().strict().call();
        assertThat(lint.isFailed())
                .as("helm lint --strict: %s", lint.getMessages())
                .isFalse();
        assertThat(lint.getMessages())
                .as("nothing above INFO")
                .allMatch(m -> m.startsWith("[INFO]"), "is an [INFO] message");
    }
}
