package dev.drover.volumes;

import dev.drover.api.v1alpha1.Names;
import dev.drover.common.UserText;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a task's {@code config.volumeMounts}: at most {@link #MAX} entries of {@code volume}, {@code destination}
 * (absolute, clean, at most {@link #MAX_DESTINATION} characters, each once) and {@code readOnly}. No destination may
 * be one of the directories Drover gives the task ({@link #RESERVED}) or a parent of one, nor inside {@code /proc},
 * {@code /sys}, {@code /dev} or {@code /secrets}. An exec task, which sees the host's own root file system, may mount
 * volumes only inside its local and alloc directories ({@link Where#TASK_DIRECTORIES}).
 */
public final class VolumeMounts {

    /** The config key. */
    public static final String KEY = "volumeMounts";
    /** The most mounts a task may ask for. */
    public static final int MAX = 32;
    /** The longest destination. */
    public static final int MAX_DESTINATION = 1024;

    /** What the task is given at these paths, so no volume may cover them. */
    static final List<String> RESERVED = List.of("/alloc", "/local", "/secrets", "/tmp", "/proc", "/sys", "/dev");
    /** Below these a volume would undo the task's confinement or its credentials. */
    static final List<String> SEALED = List.of("/secrets", "/proc", "/sys", "/dev");
    /** Where an exec task's volumes may go: below its local and alloc directories, as a container names them. */
    public static final List<String> TASK_DIRECTORIES = List.of("/local", "/alloc");

    /** Where a driver lets volumes be mounted. */
    public enum Where {
        /** Anywhere in the task's own root file system (a container's). */
        ANYWHERE,
        /** Only below {@code /local/} and {@code /alloc/}: the task's root file system is the host's. */
        TASK_DIRECTORIES
    }

    private VolumeMounts() {}

    /**
     * The mounts {@code raw} (the key's value, null when absent) asks for; what is wrong goes to {@code problems},
     * each naming its {@code config.volumeMounts[i]} field.
     */
    public static List<VolumeMount> read(Object raw, Where where, List<String> problems) {
        if (raw == null) {
            return List.of();
        }
        if (!(raw instanceof List<?> list)) {
            problems.add(
                    "config." + KEY + ": " + UserText.value(raw) + " is not a list of {volume, destination, readOnly}");
            return List.of();
        }
        if (list.size() > MAX) {
            problems.add("config." + KEY + ": " + list.size() + " mounts; at most " + MAX + " are allowed");
            return List.of();
        }
        List<VolumeMount> out = new ArrayList<>();
        Set<String> destinations = new HashSet<>();
        for (int i = 0; i < list.size(); i++) {
            String at = "config." + KEY + "[" + i + "]";
            if (!(list.get(i) instanceof Map<?, ?> m)) {
                problems.add(at + ": " + UserText.value(list.get(i)) + " is not a map of volume, destination and"
                        + " readOnly");
                continue;
            }
            int before = problems.size();
            for (Object key : m.keySet()) {
                if (!List.of("volume", "destination", "readOnly").contains(key)) {
                    problems.add(at + "." + UserText.bare(String.valueOf(key))
                            + ": unknown key (known: volume, destination, readOnly)");
                }
            }
            String volume = text(m.get("volume"), at + ".volume", problems);
            if (volume != null && !Names.isLabel(volume)) {
                problems.add(at + ".volume: " + UserText.quote(volume) + " is not a volume name of spec.volumes");
            }
            String destination = text(m.get("destination"), at + ".destination", problems);
            if (destination != null) {
                String problem = destinationProblem(destination, where);
                if (problem != null) {
                    problems.add(at + ".destination: " + problem);
                } else if (!destinations.add(destination)) {
                    problems.add(at + ".destination: " + UserText.quote(destination)
                            + " is mounted by another entry; each destination takes one volume");
                }
            }
            Object ro = m.get("readOnly");
            if (ro != null && !(ro instanceof Boolean)) {
                problems.add(at + ".readOnly: " + UserText.value(ro) + " is not true or false");
            }
            if (problems.size() == before) {
                out.add(new VolumeMount(volume, destination, Boolean.TRUE.equals(ro)));
            }
        }
        return List.copyOf(out);
    }

    private static String text(Object v, String at, List<String> problems) {
        if (v == null) {
            problems.add(at + ": is required");
            return null;
        }
        if (!(v instanceof String s)) {
            problems.add(at + ": " + UserText.value(v) + " is not a string");
            return null;
        }
        return s;
    }

    /** What is wrong with {@code d} as a destination, or null. */
    static String destinationProblem(String d, Where where) {
        if (d.length() > MAX_DESTINATION) {
            return UserText.quote(d) + " is longer than " + MAX_DESTINATION + " characters";
        }
        if (!d.startsWith("/")) {
            return UserText.quote(d) + " is not an absolute path";
        }
        if (d.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            return UserText.quote(d) + " holds a control character";
        }
        for (String part : d.substring(1).split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                return d.equals("/")
                        ? "\"/\" would cover the whole file system; mount the volume on a directory"
                        : UserText.quote(d) + " is not a clean path (no '.', '..', '//' or trailing '/')";
            }
        }
        for (String r : RESERVED) {
            if (r.equals(d) || r.startsWith(d + "/")) {
                return UserText.quote(d) + " would cover " + r + ", which Drover gives the task itself";
            }
        }
        for (String s : SEALED) {
            if (d.startsWith(s + "/")) {
                return UserText.quote(d) + " is inside " + s + ", where no volume may go";
            }
        }
        if (where == Where.TASK_DIRECTORIES && TASK_DIRECTORIES.stream().noneMatch(t -> d.startsWith(t + "/"))) {
            return UserText.quote(d) + " is outside the task's directories: an exec task shares the host's root file"
                    + " system, where a volume over a system path could let it become root, so exec mounts volumes"
                    + " only below /local/ and /alloc/ (its local and alloc directories)";
        }
        return null;
    }
}
