package dev.drover.volumes;

/**
 * One entry of a task's {@code config.volumeMounts}: a volume of the allocation's {@code spec.volumes} and where the
 * task sees it.
 *
 * @param destination absolute and clean, as the task sees it ({@code /local/data} is the task's local directory's
 *                    {@code data})
 * @param readOnly    whether this mount is read-only (it is also when its host volume is)
 */
public record VolumeMount(String volume, String destination, boolean readOnly) {}
