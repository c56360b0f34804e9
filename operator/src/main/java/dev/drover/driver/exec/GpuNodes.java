package dev.drover.driver.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The NVIDIA GPU device nodes ({@code /dev/nvidiaN}) an exec task must not open: all of them but those of the
 * GPUs it was given. What it was given is {@code NVIDIA_VISIBLE_DEVICES} as the device reservation set it (GPU
 * UUIDs, matched to minor numbers through {@code /proc/driver/nvidia/gpus/ID/information}; plain indexes are taken
 * as minors). The reservation hook runs after the task's own {@code env}, so a spec cannot name GPUs it was not
 * given; on an agent without device plugins nothing is reserved and every node is hidden, whatever the task's env
 * says. The shared control nodes ({@code nvidiactl}, {@code nvidia-uvm}) stay: they open no GPU by themselves. MIG
 * devices are not told apart: a task given a MIG device sees no GPU node.
 */
final class GpuNodes {

    static final String VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES";
    private static final Pattern NODE = Pattern.compile("nvidia([0-9]{1,4})");
    private static final Pattern MINOR = Pattern.compile("(?m)^Device Minor:\\s*([0-9]{1,4})\\s*$");
    private static final Pattern UUID = Pattern.compile("(?m)^GPU UUID:\\s*(GPU-[0-9A-Za-z-]{1,64})\\s*$");
    private static final int MAX_ENTRIES = 4096;

    private final Path dev;
    private final Path nvidiaGpus;
    private final boolean reservations;

    /**
     * @param dev          where the device nodes are ({@code /dev})
     * @param nvidiaGpus   the driver's GPU list ({@code /proc/driver/nvidia/gpus})
     * @param reservations whether device plugins reserve GPUs on this agent (else no task is given any)
     */
    GpuNodes(Path dev, Path nvidiaGpus, boolean reservations) {
        this.dev = dev;
        this.nvidiaGpus = nvidiaGpus;
        this.reservations = reservations;
    }

    /** The device nodes to cover for a task with environment {@code env}. */
    Set<Path> hidden(Map<String, String> env) {
        Set<Path> hide = new TreeSet<>();
        Set<String> given = given(env);
        try (DirectoryStream<Path> nodes = Files.newDirectoryStream(dev, "nvidia*")) {
            int seen = 0;
            for (Path node : nodes) {
                Matcher m = NODE.matcher(node.getFileName().toString());
                if (++seen > MAX_ENTRIES) {
                    break;
                }
                if (m.matches() && !given.contains(Integer.toString(Integer.parseInt(m.group(1))))) {
                    hide.add(node);
                }
            }
        } catch (IOException e) {
            return hide; // no /dev to read: no nodes to hide
        }
        return hide;
    }

    /** The minor numbers of the GPUs the task was given. */
    private Set<String> given(Map<String, String> env) {
        Set<String> minors = new HashSet<>();
        String visible = env.get(VISIBLE_DEVICES);
        if (!reservations || visible == null) {
            return minors;
        }
        Map<String, String> byUuid = uuidToMinor();
        for (String id : visible.split(",", MAX_ENTRIES)) {
            String v = id.trim();
            if (v.matches("[0-9]{1,4}")) {
                minors.add(Integer.toString(Integer.parseInt(v)));
            } else if (byUuid.containsKey(v)) {
                minors.add(byUuid.get(v));
            }
        }
        return minors;
    }

    private Map<String, String> uuidToMinor() {
        Map<String, String> out = new java.util.HashMap<>();
        if (!Files.isDirectory(nvidiaGpus)) {
            return out;
        }
        try (DirectoryStream<Path> gpus = Files.newDirectoryStream(nvidiaGpus)) {
            for (Path gpu : gpus) {
                Path info = gpu.resolve("information");
                if (!Files.isRegularFile(info, LinkOption.NOFOLLOW_LINKS) || Files.size(info) > 64 * 1024) {
                    continue;
                }
                String text = Files.readString(info, StandardCharsets.UTF_8);
                Matcher minor = MINOR.matcher(text);
                Matcher uuid = UUID.matcher(text);
                if (minor.find() && uuid.find()) {
                    out.put(uuid.group(1), Integer.toString(Integer.parseInt(minor.group(1))));
                }
                if (out.size() > MAX_ENTRIES) {
                    break;
                }
            }
        } catch (IOException e) {
            return out; // unreadable: no GPU is matched, so every node stays hidden
        }
        return out;
    }
}
