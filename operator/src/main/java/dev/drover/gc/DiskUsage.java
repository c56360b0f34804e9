package dev.drover.gc;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** How full the data dir's file system is, as fractions in [0, 1]. */
public interface DiskUsage {

    double disk() throws IOException;

    double inodes() throws IOException;

    /** The file system holding {@code dir}: space from the JDK, inodes from {@code stat -f}. */
    static DiskUsage of(Path dir) {
        return new DiskUsage() {
            @Override
            public double disk() throws IOException {
                FileStore store = Files.getFileStore(dir);
                long total = store.getTotalSpace();
                return total == 0 ? 0 : 1.0 - (double) store.getUsableSpace() / total;
            }

            @Override
            public double inodes() throws IOException {
                Process p = new ProcessBuilder("stat", "-f", "-c", "%c %d", dir.toString()).start();
                String out = new String(p.getInputStream().readAllBytes()).trim();
                try {
                    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                        throw new IOException("stat -f " + dir + " failed: " + out);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
                String[] f = out.split("\\s+");
                long total = Long.parseLong(f[0]);
                long free = Long.parseLong(f[1]);
                return total == 0 ? 0 : 1.0 - (double) free / total; // file systems without inode limits report 0
            }
        };
    }
}
