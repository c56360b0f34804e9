package dev.drover.e2e.chart;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** The chart under charts/drover, rendered with helm-java's bundled Helm as {@code helm template} would. */
final class DroverChart {

    static final Path DIR = Path.of("..", "charts", "drover");
    static final String RELEASE = "drover";
    static final String NAMESPACE = "drover-system";

    private static final Pattern DOCUMENT_SEPARATOR = Pattern.compile("(?m)^---\\s*$");

    private DroverChart() {}

    static Helm helm() {
        return new Helm(DIR);
    }

    /** The cluster {@code helm template} renders for (helm's own default, 1.20, is older than the chart allows). */
    static final String KUBE_VERSION = "1.32.0";

    /**
     * {@code helm template drover charts/drover -n drover-system --kube-version 1.32.0 [-f values] [--set k=v]...},
     * CRDs not included.
     */
    static String template(ValueSet values, Map<String, Object> sets) {
        return template(KUBE_VERSION, values, sets);
    }

    /** As {@link #template(ValueSet, Map)} with the default values, for a cluster of {@code kubeVersion}. */
    static String template(String kubeVersion, Map<String, Object> sets) {
        return template(kubeVersion, ValueSet.DEFAULTS, sets);
    }

    private static String template(String kubeVersion, ValueSet values, Map<String, Object> sets) {
        TemplateCommand command =
                helm().template().withName(RELEASE).withNamespace(NAMESPACE).withKubeVersion(kubeVersion);
        values.valuesFile().ifPresent(command::withValuesFile);
        sets.forEach(command::set);
        return command.call();
    }

    static Rendered render(ValueSet values) {
        return render(values, Map.of());
    }

    static Rendered render(ValueSet values, Map<String, Object> sets) {
        return new Rendered(parse(template(values, sets)));
    }

    /** Every document of a multi-document YAML stream, each as its typed fabric8 model. */
    static List<HasMetadata> parse(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : DOCUMENT_SEPARATOR.split(yaml)) {
            if (document.lines()
                    .allMatch(line -> line.isBlank() || line.stripLeading().startsWith("#"))) {
                continue;
            }
            objects.add(Serialization.unmarshal(document, HasMetadata.class));
        }
        return objects;
    }
}
