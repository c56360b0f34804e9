package dev.drover.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A machine like the ones users have: a JDK 25 in {@code JAVA_HOME} and an older default {@code java} first
 * on {@code PATH}. The older java is a real one when this machine has one, else a stand-in that fails as
 * Java 17 fails on Drover's jars.
 */
final class OldJava {

    private static Path bin;

    private OldJava() {}

    /** A directory whose {@code java} is older than 25. */
    static synchronized Path bin() {
        if (bin == null) {
            bin = installed().orElseGet(OldJava::standIn);
        }
        return bin;
    }

    /** Sets {@code env} up as such a machine: {@code JAVA_HOME} this test JVM's JDK, the older java first on PATH. */
    static void apply(Map<String, String> env, Path... firstOnPath) {
        StringBuilder path = new StringBuilder();
        for (Path dir : firstOnPath) {
            path.append(dir.toAbsolutePath()).append(java.io.File.pathSeparator);
        }
        path.append(bin()).append(java.io.File.pathSeparator).append(System.getenv("PATH"));
        env.put("PATH", path.toString());
        env.put("JAVA_HOME", System.getProperty("java.home"));
    }

    private static java.util.Optional<Path> installed() {
        try (Stream<Path> homes = Files.list(Path.of("/usr/lib/jvm"))) {
            return homes.filter(
                            home -> Files.isExecutable(home.resolve("bin/java")) && major(home) > 0 && major(home) < 25)
                    .map(home -> home.resolve("bin"))
                    .findFirst();
        } catch (IOException e) {
            return java.util.Optional.empty();
        }
    }

    private static int major(Path home) {
        try {
            var m = java.util.regex.Pattern.compile("JAVA_VERSION=\"(\\d+)")
                    .matcher(Files.readString(home.resolve("release")));
            return m.find() ? Integer.parseInt(m.group(1)) : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    private static Path standIn() {
        try {
            Path dir = Files.createTempDirectory("old-java");
            Path java = dir.resolve("java");
            Files.writeString(java, """
                    #!/bin/sh
                    echo 'Error: UnsupportedClassVersionError: class file version 69.0, this Java runtime recognizes up to 61.0' >&2
                    exit 1
                    """);
            Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
            dir.toFile().deleteOnExit();
            java.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
