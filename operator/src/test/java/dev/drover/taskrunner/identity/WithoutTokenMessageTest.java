package dev.drover.taskrunner.identity;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WithoutTokenMessageTest {

    /** Each of a namespace's tasks keeps the event: one string for all, not hundreds of bytes for each. */
    @Test
    void theSameRefusalGivesEveryTaskTheSameMessageInstance() {
        String refusal = "cannot mint a token for ServiceAccount team/default: forbidden";
        String first = TaskCredentials.withoutTokenMessage(new String(refusal));
        String second = TaskCredentials.withoutTokenMessage(new String(refusal));
        assertThat(second).isSameAs(first);
        assertThat(first)
                .isEqualTo("Starting without a ServiceAccount token: " + refusal
                        + " (set automountServiceAccountToken: false if the task needs none)");

        String other = TaskCredentials.withoutTokenMessage("cannot mint a token: the API server is unreachable");
        assertThat(other).isNotEqualTo(first).contains("unreachable");
    }
}
