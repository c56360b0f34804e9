package dev.drover.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonClassDescription;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Categories;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.Kind;
import io.fabric8.kubernetes.model.annotation.Plural;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Singular;
import io.fabric8.kubernetes.model.annotation.Version;

/**
 * One instance of a task group bound to one node. The agent on that node runs
 * its tasks and reports what happened in {@code status}.
 */
@JsonClassDescription("One instance of a task group bound to one node: the node's agent runs its tasks and reports what"
        + " happened in status.")
@Group(Allocation.GROUP)
@Version(Allocation.VERSION)
@Kind("Allocation")
@Plural("allocations")
@Singular("allocation")
@ShortNames("alloc")
@Categories("drover")
@AdditionalPrinterColumn(name = "Node", jsonPath = ".spec.nodeName", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Status", jsonPath = ".status.clientStatus", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.ready", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Restarts", jsonPath = ".status.restarts", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(
        name = "Age",
        jsonPath = ".metadata.creationTimestamp",
        type = AdditionalPrinterColumn.Type.DATE)
@AdditionalPrinterColumn(
        name = "Type",
        jsonPath = ".spec.type",
        type = AdditionalPrinterColumn.Type.STRING,
        priority = 1)
@AdditionalPrinterColumn(
        name = "Desired",
        jsonPath = ".spec.desiredStatus",
        type = AdditionalPrinterColumn.Type.STRING,
        priority = 1)
@AdditionalPrinterColumn(
        name = "IP",
        jsonPath = ".status.network.ip",
        type = AdditionalPrinterColumn.Type.STRING,
        priority = 1)
@AdditionalPrinterColumn(
        name = "Devices",
        jsonPath = ".status.devices",
        type = AdditionalPrinterColumn.Type.STRING,
        priority = 1)
@AdditionalPrinterColumn(
        name = "Description",
        jsonPath = ".status.clientDescription",
        type = AdditionalPrinterColumn.Type.STRING,
        priority = 1)
public class Allocation extends CustomResource<AllocationSpec, AllocationStatus> implements Namespaced {

    public static final String GROUP = "drover.dev";
    public static final String VERSION = "v1alpha1";
    public static final String PLURAL = "allocations";
}
