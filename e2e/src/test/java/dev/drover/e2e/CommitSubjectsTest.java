package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log must scan: every commit since the convention began has a subject of at most 72 characters
 * ({@code area: what changed}), as CONTRIBUTING.md asks and {@code .githooks/commit-msg} checks as one commits.
 */
class CommitSubjectsTest {

    /** The subject's bound, as the hook has it. */
    static final int MAX = 72;

    /** When the convention began: the commits before it had paragraphs for subjects, and stay as they are. */
    static final String SINCE = "2026-12-02T07:38:00Z";

    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    @Test
    void everyCommitSinceTheConventionHasAShortSubject() throws Exception {
        Run log = run(List.of("git", "-C", ROOT.toString(), "log", "--since=" + SINCE, "--format=%h %s", "-n", "5000"));
        assertThat(log.code())
                .as("this test reads the repository's history with git: run it in a clone (%s)", log.output())
                .isZero();
        List<String> tooLong = log.output()
                .lines()
                .filter(line -> line.length() - line.indexOf(' ') - 1 > MAX)
                .map(line -> line.substring(0, Math.min(line.length(), 100)))
                .toList();
        assertThat(tooLong)
                .as("subjects over %d characters: move the detail to the body", MAX)
                .isEmpty();
    }

    @Test
    void theHookTakesASubjectOf72AndABody() throws Exception {
        String subject = "docs: " + "x".repeat(MAX - "docs: ".length());
        assertThat(hook("# a comment git adds\n" + subject + "\n\nwhy, and what was measured\n")
                        .code())
                .isZero();
    }

    @Test
    void theHookRefusesALongSubjectAnEmptyOneAndABodyWithoutABlankLine() throws Exception {
        Run longer = hook("docs: " + "x".repeat(MAX - "docs: ".length() + 1) + "\n");
        assertThat(longer.code()).isNotZero();
        assertThat(longer.output()).contains("the subject has 73 characters, more than 72");
        assertThat(hook("# only a comment\n\nbody\n").output()).contains("the subject is empty");
        assertThat(hook("docs: a subject\nand its body at once\n").output())
                .contains("leave a blank line between subject and body");
    }

    private Run hook(String message) throws Exception {
        Path file = Files.writeString(dir.resolve("COMMIT_EDITMSG"), message);
        return run(List.of(ROOT.resolve(".githooks/commit-msg").toString(), file.toString()));
    }

    record Run(int code, String output) {}

    private static Run run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(new ArrayList<>(command))
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(command.getFirst() + " did not end within 30 s");
        }
        return new Run(p.exitValue(), output);
    }
}
