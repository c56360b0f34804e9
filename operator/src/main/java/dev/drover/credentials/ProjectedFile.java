package dev.drover.credentials;

import dev.drover.fs.DirectoryHandle;
import java.util.Objects;

/**
 * One file of a projected directory: its content and mode (at most 0777). Its owner is the owner of the directory
 * the projection is in. The array is the caller's: it must not change it once handed over.
 */
public record ProjectedFile(byte[] content, int mode) {

    public ProjectedFile {
        Objects.requireNonNull(content, "content");
        DirectoryHandle.permissions(mode);
    }

    /** Readable by its owner only, as a Secret's files should be. */
    public static ProjectedFile ownerOnly(byte[] content) {
        return new ProjectedFile(content, 0600);
    }

    @Override
    public String toString() {
        return "ProjectedFile[" + content.length + " bytes, mode " + Integer.toOctalString(mode) + "]";
    }
}
