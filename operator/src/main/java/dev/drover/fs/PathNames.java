package dev.drover.fs;

import dev.drover.common.UserText;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Names and relative paths the agent writes under a task's directory, checked before any is used: a name is one
 * component (no {@code /}, not {@code .} or {@code ..}, no NUL, at most {@link #MAX_NAME_BYTES} bytes), a path is
 * such names joined by {@code /}, relative, at most {@link #MAX_PATH_BYTES} bytes and {@link #MAX_DEPTH} deep.
 * Names from a spec are hostile: the messages quote them escaped and cut.
 */
public final class PathNames {

    public static final int MAX_NAME_BYTES = 255;
    public static final int MAX_PATH_BYTES = 4096;
    public static final int MAX_DEPTH = 16;

    private PathNames() {}

    /** {@code name} if it is a single component; IllegalArgumentException otherwise. */
    public static String component(String name) {
        String problem = componentProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("file name " + UserText.quote(name) + " " + problem);
        }
        return name;
    }

    /** The components of the relative path {@code path}; IllegalArgumentException saying what is wrong otherwise. */
    public static List<String> split(String path, String what) {
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
        if (path.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            throw new IllegalArgumentException(
                    what + " " + UserText.quote(path) + " is longer than " + MAX_PATH_BYTES + " bytes");
        }
        if (path.startsWith("/")) {
            throw new IllegalArgumentException(what + " " + UserText.quote(path) + " must be relative");
        }
        List<String> parts = List.of(path.split("/", -1));
        if (parts.size() > MAX_DEPTH) {
            throw new IllegalArgumentException(
                    what + " " + UserText.quote(path) + " is more than " + MAX_DEPTH + " levels deep");
        }
        for (String part : parts) {
            String problem = componentProblem(part);
            if (problem != null) {
                throw new IllegalArgumentException(
                        what + " " + UserText.quote(path) + ": component " + UserText.quote(part) + " " + problem);
            }
        }
        return parts;
    }

    private static String componentProblem(String name) {
        if (name == null || name.isEmpty()) {
            return "is empty";
        }
        if (name.equals(".") || name.equals("..")) {
            return "is . or ..";
        }
        if (name.indexOf('/') >= 0 || name.indexOf('\0') >= 0) {
            return "holds / or NUL";
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            return "is longer than " + MAX_NAME_BYTES + " bytes";
        }
        return null;
    }
}
