package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;

/** Device instances reserved for one task. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class AllocatedDevice {

    private String task;
    private String vendor;
    private String type;
    private String model;
    private List<String> ids;

    public AllocatedDevice() {}

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
