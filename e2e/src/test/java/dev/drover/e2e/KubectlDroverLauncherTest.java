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
 * jar (the JVM itself would take a cache of another jar of the same name, and run that jar's classes) and by the JDK
 * build that runs it (on another, the JVM would refuse it), and a cache the JVM cannot use costs the user no line of
 * output.
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
        Files.writeString(home.resolve("release"), RELEASE);
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

    static final String RELEASE = "IMPLEMENTOR=\"Vendor\"\nJAVA_RUNTIME_VERSION=\"25.0.3+9\"\nJAVA_VERSION=\"25.0.3\"\n"
            + "OS_ARCH=\"x86_64\"\n";
    /** What drover-java --release prints for {@link #RELEASE}: the lines that tell JDK builds apart. */
    static final String RECORDED_BY = "IMPLEMENTOR=\"Vendor\"\nJAVA_RUNTIME_VERSION=\"25.0.3+9\"\nOS_ARCH=\"x86_64\"\n";

    /** A cache beside the jar, with its stamps: {@code jarStamp} for the jar, recorded by {@code jdk}. */
    void cache(String jarStamp, String jdk) throws Exception {
        Files.writeString(dir.resolve("kubectl-drover.aot"), "cache");
        Files.writeString(dir.resolve("kubectl-drover.aot.jar"), jarStamp + "\n");
        Files.writeString(dir.resolve("kubectl-drover.aot.jdk"), jdk);
    }

    /** The jar's stamp as the build records it: its size and the POSIX cksum of its last 64 KiB. */
    static String stamp(Path jar) throws Exception {
        Process p = new ProcessBuilder(
                        "sh",
                        "-c",
                        "echo \"$(wc -c <\"$1\" | tr -d ' ') $(tail -c 65536 \"$1\" | cksum | cut -d' ' -f1)\"",
                        "sh",
                        jar.toString())
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    /** The JVM maps a cache as code: one that someone else could have put or changed there is not taken. */
    @Test
    void aCacheAnotherUserOwnsOrMayWriteIsNotTaken() throws Exception {
        Map<String, String> env = fakeJdk();
        Path jar = dir.resolve("drover-agent.jar");
        Path cache = dir.resolve("kubectl-drover.aot");
        cache(stamp(jar), RECORDED_BY);
        assertThat(run(env, "status", "web").out()).as("the build's own cache").contains("-XX:AOTCache=" + cache);

        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rw-rw-rw-"));
        assertThat(run(env, "status", "web").out()).as("writable by others").doesNotContain("AOTCache");
        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rw-r--r--"));
        for (String stamp : new String[] {"kubectl-drover.aot.jar", "kubectl-drover.aot.jdk"}) {
            Files.setPosixFilePermissions(dir.resolve(stamp), PosixFilePermissions.fromString("rw-rw-r--"));
            assertThat(run(env, "status", "web").out())
                    .as("its stamp %s writable by the group", stamp)
                    .doesNotContain("AOTCache");
            Files.setPosixFilePermissions(dir.resolve(stamp), PosixFilePermissions.fromString("rw-r--r--"));
        }

        var owner = Files.getOwner(cache);
        assumeTrue(owner.getName().equals("root"), "changing a file's owner needs root");
        Files.setOwner(
                cache, cache.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        assertThat(run(env, "status", "web").out()).as("owned by another user").doesNotContain("AOTCache");
    }

    @Test
    void theCacheIsUsedOnlyWhenItWasRecordedForThisJarByThisJdk() throws Exception {
        Map<String, String> env = fakeJdk();
        Path jar = dir.resolve("drover-agent.jar");
        String aot = "-XX:AOTCache=" + dir.resolve("kubectl-drover.aot");

        Run none = run(env, "status", "web");
        assertThat(none.out())
                .doesNotContain("AOTCache")
                .contains("-Xlog:aot=off", "-jar " + jar + " kubectl status web");

        String stamp = stamp(jar);
        assertThat(stamp).startsWith("19 ");
        cache(stamp, RECORDED_BY);
        assertThat(run(env, "status", "web").out()).contains(aot + " -jar " + jar + " kubectl status web");
        Files.setLastModifiedTime(
                dir.resolve("kubectl-drover.aot"), FileTime.from(Instant.now().minusSeconds(3600)));
        assertThat(run(env, "status", "web").out())
                .as("older than the jar, as krew or tar may leave it: still this jar's")
                .contains(aot);

        cache("20 " + stamp.split(" ")[1], RECORDED_BY);
        assertThat(run(env, "status", "web").out()).as("another jar's size").doesNotContain("AOTCache");
        Files.writeString(jar, "another jar, 19 b.\n");
        cache(stamp, RECORDED_BY);
        assertThat(run(env, "status", "web").out())
                .as("another jar of the same size")
                .doesNotContain("AOTCache");

        Files.writeString(jar, "a jar of 19 bytes.\n");
        cache(stamp, RECORDED_BY.replace("25.0.3+9", "25.0.2+7"));
        assertThat(run(env, "status", "web").out())
                .as("recorded by another JDK build")
                .doesNotContain("AOTCache")
                .contains("-jar " + jar + " kubectl status web");
        cache(stamp, "");
        assertThat(run(env, "status", "web").out()).as("an empty stamp").doesNotContain("AOTCache");
    }

    @Test
    void aCacheTheJvmCannotUseCostsNoLineOfOutput() throws Exception {
        Path real = Path.of("..", "operator", "target", "drover-agent.jar")
                .toAbsolutePath()
                .normalize();
        assumeTrue(Files.isRegularFile(real), "needs the agent jar: ./mvnw -pl operator package");
        Path jar = dir.resolve("drover-agent.jar");
        Files.createSymbolicLink(jar, real);
        Path home = Path.of(System.getProperty("java.home"));
        Process release =
                new ProcessBuilder(BIN.resolve("drover-java").toString(), "--release", home.toString()).start();
        String jdk = new String(release.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(release.waitFor(10, TimeUnit.SECONDS)).isTrue();
        cache(stamp(real), jdk);
        Files.writeString(dir.resolve("kubectl-drover.aot"), "not a cache");
        Run help = run(Map.of("DROVER_JAR", jar.toString(), "JAVA_HOME", home.toString()), "--help");
        assertThat(help.exitCode()).as(help.err()).isZero();
        assertThat(help.err()).isEmpty();
        assertThat(help.out()).startsWith("kubectl drover: ").doesNotContain("[aot]", "AOT cache");
    }
}
