package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import java.util.Objects;

/**
 * A whole Secret ({@code secrets/PATH/}) or ConfigMap ({@code local/PATH/}) of the allocation's namespace as files,
 * one per key (or per {@code items} entry), read with the allocation's ServiceAccount and kept up to date in place.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "has(self.secret) != has(self.configMap)",
        message = "a files entry needs exactly one of secret and configMap")
@ValidationRule(
        value = "!has(self.secret) || (has(self.path) ? self.path : self.secret) != 'token'",
        message = "secrets/token is the task's ServiceAccount token; give this Secret another path")
public class FileProjection {

    /** The longest relative path of a file or directory. */
    public static final int MAX_PATH = 253;

    public static final int MAX_ITEMS = 64;

    public static final int DEFAULT_SECRET_MODE = 0400;
    public static final int DEFAULT_CONFIG_MAP_MODE = 0444;

    private static final String COMPONENT = "([^/.\\x00-\\x1f][^/\\x00-\\x1f]*|\\.[^/.\\x00-\\x1f][^/\\x00-\\x1f]*)";

    /** A relative path of '/'-separated names, none empty, none starting with "..", none "." (RE2: no lookahead). */
    public static final String PATH_PATTERN = "^" + COMPONENT + "(/" + COMPONENT + ")*$";

    /** One such name: the directory of a projection, directly in {@code secrets/} or {@code local/}. */
    public static final String NAME_PATTERN = "^" + COMPONENT + "$";

    @Size(min = 1, max = 253)
    @Pattern(Names.DNS1123_SUBDOMAIN)
    @JsonPropertyDescription("The Secret to project into secrets/PATH; give secret or configMap.")
    private String secret;

    @Size(min = 1, max = 253)
    @Pattern(Names.DNS1123_SUBDOMAIN)
    @JsonPropertyDescription("The ConfigMap to project into local/PATH; give secret or configMap.")
    private String configMap;

    @Size(min = 1, max = 253)
    @Pattern(NAME_PATTERN)
    @JsonPropertyDescription("The directory's name, one name without /; the object's name when not given.")
    private String path;

    @Size(max = MAX_ITEMS)
    @JsonPropertyDescription(
            "The keys to project and their files, at most 64; every key, each a file named as the key, when not given.")
    private List<KeyToPath> items;

    @Min(0)
    @Max(0777)
    @JsonPropertyDescription(
            "The files' mode bits (0 to 0777); 0400 for a Secret and 0444 for a ConfigMap when not given.")
    private Integer mode;

    @JsonPropertyDescription("Whether a missing object (or item key) is skipped instead of failing the task.")
    private Boolean optional;

    public String getSecret() {
        return secret;
    }

    public void setSecret(String secret) {
        this.secret = secret;
    }

    public String getConfigMap() {
        return configMap;
    }

    public void setConfigMap(String configMap) {
        this.configMap = configMap;
    }

    /** The directory's name, in {@code secrets/} or {@code local/}; the object's name when not given. */
    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    /** The keys to project and their files; every key, each a file named as the key, when not given. */
    public List<KeyToPath> getItems() {
        return items;
    }

    public void setItems(List<KeyToPath> items) {
        this.items = items;
    }

    /** The files' mode bits (0 to 0777); 0400 for a Secret and 0444 for a ConfigMap when not given. */
    public Integer getMode() {
        return mode;
    }

    public void setMode(Integer mode) {
        this.mode = mode;
    }

    /** Whether a missing object (or item key) is skipped instead of failing the task. */
    public Boolean getOptional() {
        return optional;
    }

    public void setOptional(Boolean optional) {
        this.optional = optional;
    }

    /** The object's name, whichever kind it is. */
    @JsonIgnore
    public String objectName() {
        return secret != null ? secret : configMap;
    }

    /** {@code secrets/PATH} or {@code local/PATH}, relative to the task's directory. */
    @JsonIgnore
    public String effectiveDirectory() {
        return (secret != null ? "secrets/" : "local/") + (path != null ? path : objectName());
    }

    @JsonIgnore
    public int effectiveMode() {
        return mode != null ? mode : secret != null ? DEFAULT_SECRET_MODE : DEFAULT_CONFIG_MAP_MODE;
    }

    @JsonIgnore
    public boolean effectiveOptional() {
        return Boolean.TRUE.equals(optional);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FileProjection f
                && Objects.equals(secret, f.secret)
                && Objects.equals(configMap, f.configMap)
                && Objects.equals(path, f.path)
                && Objects.equals(items, f.items)
                && Objects.equals(mode, f.mode)
                && Objects.equals(optional, f.optional);
    }

    @Override
    public int hashCode() {
        return Objects.hash(secret, configMap, path, items, mode, optional);
    }
}
