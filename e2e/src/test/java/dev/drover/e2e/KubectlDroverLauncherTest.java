package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code operator/bin/kubectl-drover} uses the ahead-of-time cache beside the jar only when it was recorded for that
 * jar (the JVM itself would take a cache of another jar of the same name, and run that jar's classes), and a cache the
 * JVM cannot use costs the user no line of output.
 */
class KubectlDroverLauncherTest {

    static final Path BIN = Path.of("..", "operator", "bin").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    record Run(int exitCode, String out, String err) {}

    Run run(Map<String, String> env, String... args) throws Exception {
        List<String> command =
                new ArrayList<>(List.of(BIN.resolve("kubectl-drover").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), out, err);
    }

    /** A JDK 25 whose java prints its arguments, and a jar with a cache beside it. */
    Map<String, String> fakeJdk() throws Exception {
        Path home = dir.resolve("jvm/jdk25");
        Files.createDirectories(home.resolve("bin"));
        Files.writeString(home.resolve("release"), "JAVA_VERSION=\"25.0.3\"\n");
        Path java = home.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\necho \"$*\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(dir.resolve("drover-agent.jar"), "a jar of 19 bytes.\n");
        return Map.of(
                "JAVA_HOME",
                home.toString(),
                "DROVER_JAR",
                dir.resolve("drover-agent.jar").toString());
    }

    void cache(String size, Instant modified) throws Exception {
        Path cache = dir.resolve("kubectl-drover.aot");
        Files.writeString(cache, "cache");
        Files.setLastModifiedTime(cache, FileTime.from(modified));
        Files.writeString(dir.resolve("kubectl-drover.aot.size"), size + "\n");
    }

    /** The JVM maps a cache as code: one that someone else could have put or changed there is not taken. */
    @Test
    void aCacheAnotherUserOwnsOrMayWriteIsNotTaken() throws Exception {
        Map<String, String> env = fakeJdk();
        Path jar = dir.resolve("drover-agent.jar");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(60)));
        Path cache = dir.resolve("kubectl-drover.aot");
        cache("19", Instant.now());
        assertThat(run(env, "status", "web").out()).as("the build's own cache").contains("-XX:AOTCache=" + cache);

        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rw-rw-rw-"));
        assertThat(run(env, "status", "web").out()).as("writable by others").doesNotContain("AOTCache");
        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(
                dir.resolve("kubectl-drover.aot.size"), PosixFilePermissions.fromString("rw-rw-r--"));
        assertThat(run(env, "status", "web").out())
                .as("its size stamp writable by the group")
                .doesNotContain("AOTCache");
        Files.setPosixFilePermissions(
                dir.resolve("kubectl-drover.aot.size"), PosixFilePermissions.fromString("rw-r--r--"));

        var owner = Files.getOwner(cache);
        assumeTrue(owner.getName().equals("root"), "changing a file's owner needs root");
        Files.setOwner(
                cache, cache.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        assertThat(run(env, "status", "web").out()).as("owned by another user").doesNotContain("AOTCache");
    }

    @Test
    void theCacheIsUsedOnlyWhenItWasRecordedForThisJar() throws Exception {
        Map<String, String> env = fakeJdk();
        Path jar = dir.resolve("drover-agent.jar");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(60)));
        String aot = "-XX:AOTCache=" + dir.resolve("kubectl-drover.aot");

        Run none = run(env, "status", "web");
        assertThat(none.out())
                .doesNotContain("AOTCache")
                .contains("-Xlog:aot=off", "-jar " + jar + " kubectl status web");

        cache("19", Instant.now());
        assertThat(run(env, "status", "web").out()).contains(aot + " -jar " + jar + " kubectl status web");

        cache("20", Instant.now());
        assertThat(run(env, "status", "web").out()).as("another jar's size").doesNotContain("AOTCache");

        cache("19", Instant.now().minusSeconds(3600));
        assertThat(run(env, "status", "web").out()).as("older than the jar").doesNotContain("AOTCache");
    }

    @Test
    void aCacheTheJvmCannotUseCostsNoLineOfOutput() throws Exception {
        Path real = Path.of("..", "operator", "target", "drover-agent.jar")
                .toAbsolutePath()
                .normalize();
        assumeTrue(Files.isRegularFile(real), "needs the agent jar: ./mvnw -pl operator package");
        Path jar = dir.resolve("drover-agent.jar");
        Files.createSymbolicLink(jar, real);
        cache(Long.toString(Files.size(real)), Instant.now().plusSeconds(5));
        Files.writeString(dir.resolve("kubectl-drover.aot"), "not a cache");
        Files.setLastModifiedTime(
                dir.resolve("kubectl-drover.aot"), FileTime.from(Instant.now().plusSeconds(5)));
        Run help = run(Map.of("DROVER_JAR", jar.toString()), "--help");
        assertThat(help.exitCode()).as(help.err()).isZero();
        assertThat(help.err()).isEmpty();
        assertThat(help.out()).startsWith("kubectl drover: ").doesNotContain("[aot]", "AOT cache");
    }
}
