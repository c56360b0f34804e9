package dev.drover.taskrunner.identity;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WithoutTokenMessageTest {

    @Test
    void theMessageSaysWhyAndWhatToDo() {
        String refusal = "cannot mint a token for ServiceAccount team/default: forbidden";
        assertThat(TaskCredentials.withoutTokenMessage(refusal))
                .isEqualTo("Starting without a ServiceAccount token: " + refusal
                        + " (set automountServiceAccountToken: false if the task needs none)");
    }

    /** Each of a namespace's tasks keeps the event: one string for all, not hundreds of bytes for each. */
    @Test
    void equalTextsInARowAreOneInstance() {
        TaskCredentials.LastText texts = new TaskCredentials.LastText();
        String first = texts.share(new String("cannot mint a token: forbidden"));
        assertThat(texts.share(new String("cannot mint a token: forbidden"))).isSameAs(first);
        String other = texts.share("the API server is unreachable");
        assertThat(other).isEqualTo("the API server is unreachable");
        assertThat(texts.share(new String("cannot mint a token: forbidden")))
                .isEqualTo(first)
                .isNotSameAs(first);
    }
}
