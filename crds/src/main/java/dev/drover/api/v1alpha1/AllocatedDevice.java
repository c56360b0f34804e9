package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** Device instances reserved for one task. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AllocatedDevice {

    @JsonPropertyDescription("The task the devices are reserved for.")
    private String task;

    @JsonPropertyDescription("The devices' vendor, e.g. nvidia.")
    private String vendor;

    @JsonPropertyDescription("The devices' type, e.g. gpu.")
    private String type;

    @JsonPropertyDescription("The devices' model.")
    private String model;

    @JsonPropertyDescription("The reserved instances' IDs.")
    private List<String> ids;

    public AllocatedDevice() {}

    /**
     * The instances in {@code devices} counted by {@code vendor/type}, in order of first appearance, e.g.
     * {@code 2 nvidia/gpu, 1 intel/fpga}; null when there are none.
     */
    public static String summary(List<AllocatedDevice> devices) {
        if (devices == null) {
            return null;
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (AllocatedDevice d : devices) {
            int n = d == null || d.getIds() == null ? 0 : d.getIds().size();
            if (n > 0) {
                String kind = d.getVendor() == null ? d.getType() : d.getVendor() + "/" + d.getType();
                counts.merge(kind, n, Integer::sum);
            }
        }
        if (counts.isEmpty()) {
            return null;
        }
        StringBuilder out = new StringBuilder();
        counts.forEach((kind, n) ->
                out.append(out.isEmpty() ? "" : ", ").append(n).append(' ').append(kind));
        return out.toString();
    }

    public AllocatedDevice(String task, String vendor, String type, String model, List<String> ids) {
        this.task = task;
        this.vendor = vendor;
        this.type = type;
        this.model = model;
        this.ids = ids;
    }

    public String getTask() {
        return task;
    }

    public void setTask(String task) {
        this.task = task;
    }

    public String getVendor() {
        return vendor;
    }

    public void setVendor(String vendor) {
        this.vendor = vendor;
    }

    public String getType() {
        return type;
    }

    public void setType(String type) {
        this.type = type;
    }

    public String getModel() {
        return model;
    }

    public void setModel(String model) {
        this.model = model;
    }

    public List<String> getIds() {
        return ids;
    }

    public void setIds(List<String> ids) {
        this.ids = ids;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AllocatedDevice d
                && Objects.equals(task, d.task)
                && Objects.equals(vendor, d.vendor)
                && Objects.equals(type, d.type)
                && Objects.equals(model, d.model)
                && Objects.equals(ids, d.ids);
    }

    @Override
    public int hashCode() {
        return Objects.hash(task, vendor, type, model, ids);
    }
}
