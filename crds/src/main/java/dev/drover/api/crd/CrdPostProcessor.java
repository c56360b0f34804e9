package dev.drover.api.crd;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Build step run right after fabric8's CRD generator (crds/pom.xml): fabric8 7.5.2 has no post-processor option in
 * its Maven plugin, so the few things its annotations cannot say are done here, each by one {@link CrdStep}.
 */
public final class CrdPostProcessor {

    static final List<CrdStep> STEPS = List.of(new PrinterColumnOrder(), new SchemaDescriptions(), new ListMaps());

    private CrdPostProcessor() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: CrdPostProcessor CRD_FILE");
            System.exit(2);
        }
        Path file = Path.of(args[0]);
        String yaml = Files.readString(file, StandardCharsets.UTF_8);
        Files.writeString(file, process(yaml), StandardCharsets.UTF_8);
    }

    /** The CRD in {@code yaml} with every step applied, as YAML (the generator's header comment kept). */
    static String process(String yaml) {
        CustomResourceDefinition crd = Serialization.unmarshal(yaml, CustomResourceDefinition.class);
        for (CrdStep step : STEPS) {
            step.apply(crd);
        }
        String header = yaml.startsWith("#") ? yaml.substring(0, yaml.indexOf('\n') + 1) : "";
        return header + Serialization.asYaml(crd);
    }
}
