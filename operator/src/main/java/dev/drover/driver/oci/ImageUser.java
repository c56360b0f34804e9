package dev.drover.driver.oci;

import dev.drover.common.UserText;
import dev.drover.driver.DriverStartException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The user a container runs as, as runtimes read it: {@code uid}, {@code uid:gid}, {@code name} or {@code name:group},
 * names looked up in the image's own {@code /etc/passwd} and {@code /etc/group}; none is root. Those files are the
 * image's, so a link there is not followed (it could name a file of the host): a name that needs one is unknown.
 *
 * @param groups the primary group, then those {@code /etc/group} lists the user in
 */
record ImageUser(long uid, long gid, List<Long> groups) {

    static final ImageUser ROOT = new ImageUser(0, 0, List.of());
    /** Bytes of {@code /etc/passwd} or {@code /etc/group} read at most. */
    static final int MAX_FILE = 1024 * 1024;

    static ImageUser resolve(Path rootfs, String spec) throws DriverStartException {
        if (spec == null || spec.isBlank()) {
            return ROOT;
        }
        String[] parts = spec.split(":", 2);
        String user = parts[0];
        String group = parts.length > 1 ? parts[1] : null;
        List<String[]> passwd = entries(rootfs, "passwd");
        long uid;
        Long gid = null;
        String name = null;
        if (isNumber(user)) {
            uid = Long.parseLong(user);
            for (String[] e : passwd) {
                if (e.length > 3 && e[2].equals(user)) {
                    name = e[0];
                    gid = number(e[3]);
                    break;
                }
            }
        } else {
            String[] found = null;
            for (String[] e : passwd) {
                if (e.length > 3 && e[0].equals(user)) {
                    found = e;
                    break;
                }
            }
            if (found == null || number(found[2]) == null || number(found[3]) == null) {
                throw new DriverStartException(
                        "user " + UserText.quote(user) + " is not in the image's /etc/passwd"
                                + " (give a numeric uid, or a user the image has)",
                        false);
            }
            name = user;
            uid = number(found[2]);
            gid = number(found[3]);
        }
        List<String[]> groupFile = entries(rootfs, "group");
        if (group != null) {
            if (isNumber(group)) {
                gid = Long.parseLong(group);
            } else {
                gid = null;
                for (String[] e : groupFile) {
                    if (e.length > 2 && e[0].equals(group)) {
                        gid = number(e[2]);
                    }
                }
                if (gid == null) {
                    throw new DriverStartException(
                            "group " + UserText.quote(group) + " is not in the image's /etc/group", false);
                }
            }
        }
        long primary = gid == null ? uid : gid;
        List<Long> groups = new ArrayList<>(List.of(primary)); // as runtimes give it: the primary group listed too
        if (name != null) {
            for (String[] e : groupFile) {
                Long g = e.length > 3 ? number(e[2]) : null;
                if (g != null && !groups.contains(g) && List.of(e[3].split(",")).contains(name)) {
                    groups.add(g);
                }
            }
        }
        return new ImageUser(uid, primary, List.copyOf(groups));
    }

    /** The lines of the image's {@code /etc/NAME}, split on {@code :}; none when it is absent or not a plain file. */
    private static List<String[]> entries(Path rootfs, String name) throws DriverStartException {
        Path etc = rootfs.resolve("etc");
        Path file = etc.resolve(name);
        if (!Files.isDirectory(etc, LinkOption.NOFOLLOW_LINKS)
                || !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            bytes = in.readNBytes(MAX_FILE);
        } catch (IOException e) {
            throw new DriverStartException("cannot read the image's /etc/" + name + ": " + e.getMessage(), false);
        }
        List<String[]> out = new ArrayList<>();
        for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                out.add(line.split(":", -1));
            }
        }
        return out;
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty()
                && s.length() <= 10
                && s.chars().allMatch(Character::isDigit)
                && Long.parseLong(s) <= 0xffffffffL;
    }

    private static Long number(String s) {
        return isNumber(s) ? Long.parseLong(s) : null;
    }
}
