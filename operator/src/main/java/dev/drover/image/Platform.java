package dev.drover.image;

import java.util.Locale;

/**
 * An operating system and CPU architecture as image indexes name them ({@code linux/amd64}, {@code linux/arm64/v8}).
 *
 * @param variant the CPU variant, or null when none is asked for
 */
public record Platform(String os, String architecture, String variant) {

    /** The node the agent runs on, named as OCI names platforms (Java's {@code aarch64} is {@code arm64}). */
    public static Platform node() {
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        return switch (arch) {
            case "amd64", "x86_64" -> new Platform("linux", "amd64", null);
            case "aarch64", "arm64" -> new Platform("linux", "arm64", "v8");
            case "x86", "i386", "i686" -> new Platform("linux", "386", null);
            default -> new Platform("linux", arch, null);
        };
    }

    /**
     * Whether an index entry for {@code os}/{@code architecture}/{@code variant} runs here. An entry without a variant
     * matches any; for arm64, {@code v8} is what an entry without one means.
     */
    boolean runs(String os, String architecture, String entryVariant) {
        if (!this.os.equals(os) || !this.architecture.equals(architecture)) {
            return false;
        }
        return entryVariant == null || entryVariant.isEmpty() || variant == null || variant.equals(entryVariant);
    }

    @Override
    public String toString() {
        return os + "/" + architecture + (variant == null ? "" : "/" + variant);
    }
}
