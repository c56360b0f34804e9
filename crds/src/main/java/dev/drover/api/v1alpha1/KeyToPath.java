package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/** One key of a projected Secret or ConfigMap and the file it becomes, as a Pod volume's {@code items}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KeyToPath {

    @Required
    @Size(min = 1, max = 253)
    @Pattern(Names.DATA_KEY)
    @JsonPropertyDescription("The key whose value becomes the file.")
    private String key;

    @Required
    @Size(min = 1, max = FileProjection.MAX_PATH)
    @Pattern(FileProjection.PATH_PATTERN)
    @JsonPropertyDescription("Where the value goes, relative to the projection's directory.")
    private String path;

    @Min(0)
    @Max(0777)
    @JsonPropertyDescription("The file's mode bits (0 to 0777); the projection's mode when not given.")
    private Integer mode;

    public KeyToPath() {}

    public KeyToPath(String key, String path, Integer mode) {
        this.key = key;
        this.path = path;
        this.mode = mode;
    }

    public String getKey() {
        return key;
    }

    public void setKey(String key) {
        this.key = key;
    }

    /** Where the value goes, relative to the projection's directory. */
    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    /** The file's mode bits (0 to 0777); the projection's {@code mode} when not given. */
    public Integer getMode() {
        return mode;
    }

    public void setMode(Integer mode) {
        this.mode = mode;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyToPath k
                && Objects.equals(key, k.key)
                && Objects.equals(path, k.path)
                && Objects.equals(mode, k.mode);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, path, mode);
    }
}
