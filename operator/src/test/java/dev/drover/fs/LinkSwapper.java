package dev.drover.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * What a hostile task does to a tree the agent walks: swaps the directory {@code at} for a link to {@code target}
 * and back, over and over, on a thread of its own, until closed. Closing puts the directory back.
 */
public final class LinkSwapper implements AutoCloseable {

    private final Path at;
    private final Path aside;
    private final Path target;
    private final Thread thread;
    private volatile boolean stop;
    private volatile long swaps;

    private LinkSwapper(Path at, Path target) {
        this.at = at;
        this.aside = at.resolveSibling(at.getFileName() + ".real");
        this.target = target;
        this.thread = Thread.ofPlatform().name("link-swapper").start(this::run);
    }

    /** Starts swapping {@code at} (a directory) for a link to {@code target}. */
    public static LinkSwapper start(Path at, Path target) {
        return new LinkSwapper(at, target);
    }

    /** How many times the link was put in place so far. */
    public long swaps() {
        return swaps;
    }

    private void run() {
        while (!stop) {
            try {
                Files.move(at, aside, StandardCopyOption.ATOMIC_MOVE);
                Files.createSymbolicLink(at, target);
                swaps++;
                Thread.onSpinWait();
                Files.delete(at);
                Files.move(aside, at, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                restore(); // the agent removed or moved something meanwhile: start again from a directory
            }
        }
    }

    private void restore() {
        try {
            if (Files.isSymbolicLink(at)) {
                Files.delete(at);
            }
            if (Files.isDirectory(aside) && !Files.exists(at)) {
                Files.move(aside, at, StandardCopyOption.ATOMIC_MOVE);
            }
        } catch (IOException ignored) {
            // tried again on the next turn
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        thread.join();
        restore();
    }
}
