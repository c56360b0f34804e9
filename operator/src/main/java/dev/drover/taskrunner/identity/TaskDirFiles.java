package dev.drover.taskrunner.identity;

import dev.drover.credentials.ProjectedDirectory;
import dev.drover.credentials.ProjectedFile;
import dev.drover.credentials.TaskFileWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link CredentialFiles} over the link-safe writers of {@code dev.drover.credentials}. Calls for one task come
 * from its own refresher or its runner's thread, never both at once (the refresher runs only while the task does,
 * prestart only before it starts), which is the one-writer-per-file rule those writers need.
 */
final class TaskDirFiles implements CredentialFiles {

    private final TaskFileWriter writer = new TaskFileWriter();
    private final ProjectedDirectory projected = new ProjectedDirectory(Clock.systemUTC());

    @Override
    public void writeToken(Path taskDir, byte[] token) throws IOException {
        writer.write(taskDir, "secrets", "token", token, TaskFileWriter.DEFAULT_MODE);
    }

    @Override
    public boolean project(Path taskDir, String dir, Map<String, FileContent> files) throws IOException {
        Map<String, ProjectedFile> out = new LinkedHashMap<>();
        files.forEach((path, f) -> out.put(path, new ProjectedFile(f.bytes(), f.mode())));
        try {
            return projected.update(taskDir, dir, out, ProjectedDirectory.OWNER_ONLY);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
    }
}
