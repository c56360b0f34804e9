package dev.drover.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code operator/bin/drover-java}, which the quick start's launchers use to find a Java 25 on any machine. */
class DroverJavaTest {

    static final Path SCRIPT =
            Path.of("..", "operator", "bin", "drover-java").toAbsolutePath().normalize();

    @TempDir
    Path dir;

    record Run(int exitCode, String out, String err) {}

    /** A JDK home whose release file says {@code version} and whose java prints its name and arguments. */
    Path jdk(String name, String version) throws Exception {
        Path home = dir.resolve("jvm").resolve(name);
        Files.createDirectories(home.resolve("bin"));
        Files.writeString(home.resolve("release"), "IMPLEMENTOR=\"test\"\nJAVA_VERSION=\"" + version + "\"\n");
        Path java = home.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\necho \"" + name + " $*\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        return home;
    }

    Run run(Map<String, String> env, String... args) throws Exception {
        var command = new java.util.ArrayList<>(java.util.List.of(SCRIPT.toString()));
        command.addAll(java.util.List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().remove("JAVA_HOME");
        pb.environment().put("PATH", "/usr/bin:/bin");
        pb.environment().put("DROVER_JDK_DIRS", dir.resolve("jvm").toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), out.strip(), err.strip());
    }

    @Test
    void javaHomeOf25IsUsedThoughAnOlderJavaIsFirstOnPath() throws Exception {
        Path old = jdk("jdk17", "17.0.15");
        Path jdk25 = jdk("temurin25", "25.0.3");
        Run run = run(
                Map.of("JAVA_HOME", jdk25.toString(), "PATH", old.resolve("bin") + ":/usr/bin:/bin"), "-jar", "x.jar");
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("temurin25 -jar x.jar");
    }

    @Test
    void anOlderJavaHomeAndPathFallBackToAnInstalledJdk25() throws Exception {
        Path old = jdk("jdk17", "17.0.15");
        jdk("jdk21", "21.0.2");
        Path jdk25 = jdk("temurin25", "25");
        Run run = run(Map.of("JAVA_HOME", old.toString(), "PATH", old.resolve("bin") + ":/usr/bin:/bin"), "--home");
        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo(jdk25.toString());
    }

    @Test
    void aJava25OnPathIsUsedWithoutJavaHome() throws Exception {
        Path jdk26 = jdk("jdk26", "26-ea");
        Run run = run(Map.of("PATH", jdk26.resolve("bin") + ":/usr/bin:/bin"), "-version");
        assertThat(run.out()).isEqualTo("jdk26 -version");
    }

    @Test
    void noJava25SaysWhatToDoAndExitsOne() throws Exception {
        Path old = jdk("jdk17", "17.0.15");
        jdk("jdk8", "1.8.0_402");
        Run run = run(
                Map.of("JAVA_HOME", old.toString(), "PATH", old.resolve("bin") + ":/usr/bin:/bin"), "-jar", "x.jar");
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err())
                .isEqualTo("drover: no Java 25 or newer found (JAVA_HOME=" + old
                        + " is Java 17); install a JDK 25 and set JAVA_HOME to it");
    }

    @Test
    void aHomeWithoutAReleaseFileIsNotTaken() throws Exception {
        Path broken = jdk("broken", "25");
        Files.delete(broken.resolve("release"));
        Run run = run(Map.of("JAVA_HOME", broken.toString()), "--home");
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).startsWith("drover: no Java 25 or newer found");
    }
}
