package dev.drover.api.crd;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Puts the printer columns back in the order {@link Allocation} declares them. The generator sorts them by JSON
 * path, which would show AGE right after NAME; {@code kubectl get} users expect NODE, STATUS, READY, RESTARTS, AGE.
 */
final class PrinterColumnOrder implements CrdStep {

    @Override
    public void apply(CustomResourceDefinition crd) {
        List<String> declared = Arrays.stream(Allocation.class.getAnnotationsByType(AdditionalPrinterColumn.class))
                .map(AdditionalPrinterColumn::name)
                .toList();
        for (CustomResourceDefinitionVersion version : crd.getSpec().getVersions()) {
            List<CustomResourceColumnDefinition> columns = version.getAdditionalPrinterColumns();
            if (columns != null) {
                columns.sort(Comparator.comparingInt(c -> rank(declared, c.getName())));
            }
        }
    }

    private static int rank(List<String> declared, String name) {
        int i = declared.indexOf(name);
        return i < 0 ? declared.size() : i;
    }
}
