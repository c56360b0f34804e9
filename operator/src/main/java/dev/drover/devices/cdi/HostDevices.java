package dev.drover.devices.cdi;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

/** A device node's type and numbers, read from the host's device file where a spec leaves them out. */
public final class HostDevices {

    private static final int S_IFMT = 0170000;
    private static final int S_IFCHR = 0020000;
    private static final int S_IFBLK = 0060000;
    static final int DEFAULT_FILE_MODE = 0666;

    private HostDevices() {}

    /**
     * {@code node} with every field set: type, major and minor from its host file when the spec left any out (as a
     * runtime applying CDI does), {@code 0666}, {@code rwm}, uid and gid 0 where it gave none.
     */
    public static CdiDeviceNode complete(CdiDeviceNode node) throws CdiException {
        Character type = node.type();
        Long major = node.major();
        Long minor = node.minor();
        if (type == null || major == null || minor == null) {
            Map<String, Object> attrs;
            try {
                attrs = Files.readAttributes(Path.of(node.host()), "unix:mode,rdev");
            } catch (NoSuchFileException e) {
                throw new CdiException(
                        "device node " + node.path() + ": its host file " + node.host() + " does not exist");
            } catch (IOException | UnsupportedOperationException e) {
                throw new CdiException(
                        "device node " + node.path() + ": its host file " + node.host() + " cannot be read: " + e);
            }
            int mode = (Integer) attrs.get("mode");
            long rdev = (Long) attrs.get("rdev");
            char found = switch (mode & S_IFMT) {
                case S_IFCHR -> 'c';
                case S_IFBLK -> 'b';
                default ->
                    throw new CdiException("device node " + node.path() + ": its host file " + node.host()
                            + " is not a character or block device");
            };
            type = type == null ? found : type;
            major = major == null ? ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & 0xfffff000L) : major;
            minor = minor == null ? (rdev & 0xff) | ((rdev >>> 12) & 0xffffff00L) : minor;
        }
        return new CdiDeviceNode(
                node.path(),
                node.host(),
                type,
                major,
                minor,
                node.fileMode() == null ? DEFAULT_FILE_MODE : node.fileMode(),
                node.permissions() == null ? "rwm" : node.permissions(),
                node.uid() == null ? 0L : node.uid(),
                node.gid() == null ? 0L : node.gid());
    }
}
