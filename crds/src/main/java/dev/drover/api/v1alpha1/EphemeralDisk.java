package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import java.util.Objects;

/** The allocation's scratch space, and whether a replacement inherits it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class EphemeralDisk {

    public static final int DEFAULT_SIZE_MB = 300;

    // Same defaults as resolve(): the API server fills these in when ephemeralDisk is given.
    @Min(1)
    @Default("" + DEFAULT_SIZE_MB)
    @JsonPropertyDescription("The disk's size in MB, at least 1; 300 when not given.")
    private Integer sizeMB;

    @Default("false")
    @JsonPropertyDescription(
            "Carry the previous allocation's alloc/data and each task's local/ over when it ran on the same node.")
    private Boolean sticky;

    @Default("false")
    @JsonPropertyDescription(
            "Like sticky, and also download the data from the previous allocation's node when it ran elsewhere.")
    private Boolean migrate;

    public EphemeralDisk() {}

    public EphemeralDisk(Integer sizeMB, Boolean sticky, Boolean migrate) {
        this.sizeMB = sizeMB;
        this.sticky = sticky;
        this.migrate = migrate;
    }

    public Integer getSizeMB() {
        return sizeMB;
    }

    public void setSizeMB(Integer sizeMB) {
        this.sizeMB = sizeMB;
    }

    public Boolean getSticky() {
        return sticky;
    }

    public void setSticky(Boolean sticky) {
        this.sticky = sticky;
    }

    public Boolean getMigrate() {
        return migrate;
    }

    public void setMigrate(Boolean migrate) {
        this.migrate = migrate;
    }

    /** {@code disk} with unset fields at their defaults; null means all defaults. */
    public static Resolved resolve(EphemeralDisk disk) {
        if (disk == null) {
            return new Resolved(DEFAULT_SIZE_MB, false, false);
        }
        return new Resolved(
                disk.sizeMB == null ? DEFAULT_SIZE_MB : disk.sizeMB,
                Boolean.TRUE.equals(disk.sticky),
                Boolean.TRUE.equals(disk.migrate));
    }

    /** An ephemeral disk with every field decided. */
    public record Resolved(int sizeMB, boolean sticky, boolean migrate) {
        /** Whether the previous allocation's data is carried over. */
        public boolean carriesData() {
            return sticky || migrate;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EphemeralDisk d
                && Objects.equals(sizeMB, d.sizeMB)
                && Objects.equals(sticky, d.sticky)
                && Objects.equals(migrate, d.migrate);
    }

    @Override
    public int hashCode() {
        return Objects.hash(sizeMB, sticky, migrate);
    }
}
