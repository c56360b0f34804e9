package dev.drover.taskrunner.identity;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/** Writes a task's credentials into its directory, which the task itself may change at any moment. */
interface CredentialFiles {

    /** Replaces {@code secrets/token} of the task directory, atomically, readable by the task's user only. */
    void writeToken(Path taskDir, byte[] token) throws IOException;

    /**
     * Makes {@code dir} (relative to the task directory) hold exactly {@code files}, swapped in at once; false when
     * it held them already.
     */
    boolean project(Path taskDir, String dir, Map<String, FileContent> files) throws IOException;
}
