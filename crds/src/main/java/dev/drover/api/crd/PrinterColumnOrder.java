package dev.drover.api.crd;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Build step run right after fabric8's CRD generator: puts the printer columns
 * back in the order {@link Allocation} declares them. The generator sorts them
 * by JSON path, which would show AGE right after NAME; {@code kubectl get}
 * users expect NODE, STATUS, READY, RESTARTS, AGE.
 */
public final class PrinterColumnOrder {

    private PrinterColumnOrder() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: PrinterColumnOrder CRD_FILE");
            System.exit(2);
        }
        Path file = Path.of(args[0]);
        String yaml = Files.readString(file, StandardCharsets.UTF_8);
        Files.writeString(file, reorder(yaml), StandardCharsets.UTF_8);
    }

    /** The CRD in {@code yaml} with each version's columns in declaration order, as YAML. */
    static String reorder(String yaml) {
        CustomResourceDefinition crd = Serialization.unmarshal(yaml, CustomResourceDefinition.class);
        List<String> declared = Arrays.stream(Allocation.class.getAnnotationsByType(AdditionalPrinterColumn.class))
                .map(AdditionalPrinterColumn::name)
                .toList();
        for (CustomResourceDefinitionVersion version : crd.getSpec().getVersions()) {
            List<CustomResourceColumnDefinition> columns = version.getAdditionalPrinterColumns();
            if (columns != null) {
                columns.sort(Comparator.comparingInt(c -> rank(declared, c.getName())));
            }
        }
        String header = yaml.startsWith("#") ? yaml.substring(0, yaml.indexOf('\n') + 1) : "";
        return header + Serialization.asYaml(crd);
    }

    private static int rank(List<String> declared, String name) {
        int i = declared.indexOf(name);
        return i < 0 ? declared.size() : i;
    }
}
