package dev.drover.devices.cdi;

/**
 * A device node a CDI spec gives a container ({@code containerEdits.deviceNodes[]}). As read, the fields a spec may
 * leave out are null; {@link CdiRegistry#resolve} fills them from the host's device file.
 *
 * @param path        where the container sees it: absolute, clean, under {@code /dev/}
 * @param hostPath    the host's device file: absolute and clean; null means {@code path}
 * @param type        {@code c} or {@code b} ({@code u}, unbuffered, reads as {@code c})
 * @param fileMode    its mode bits inside the container ({@code 0666} when left out)
 * @param permissions the device cgroup's access, of {@code r}, {@code w} and {@code m} ({@code rwm} when left out)
 */
public record CdiDeviceNode(
        String path,
        String hostPath,
        Character type,
        Long major,
        Long minor,
        Integer fileMode,
        String permissions,
        Long uid,
        Long gid) {

    /** Where the host's device file is. */
    public String host() {
        return hostPath != null ? hostPath : path;
    }
}
