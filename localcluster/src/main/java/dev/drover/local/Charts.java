package dev.drover.local;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Where the Drover chart is when {@code --chart} does not say: in the checkout the jar was built in. */
final class Charts {

    private Charts() {}

    /**
     * {@code charts/drover} under the working directory or its parent (a module's tests run in its directory),
     * else in the checkout this code was loaded from ({@code localcluster/target/drover-local.jar} or {@code
     * localcluster/target/classes}).
     */
    static Path locate() {
        List<Path> candidates =
                new ArrayList<>(List.of(Path.of("charts", "drover"), Path.of("..", "charts", "drover")));
        try {
            Path code = Path.of(Charts.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            Path checkout = code.getParent() == null ? null : code.getParent().getParent();
            if (checkout != null && checkout.getParent() != null) {
                candidates.add(checkout.getParent().resolve("charts").resolve("drover"));
            }
        } catch (URISyntaxException | RuntimeException e) {
            // no code location: the working directory's candidates only
        }
        for (Path candidate : candidates) {
            if (Files.isRegularFile(candidate.resolve("Chart.yaml"))) {
                return candidate;
            }
        }
        throw new IllegalArgumentException(
                "cannot find the Drover chart (charts/drover): run from the checkout or pass --chart DIR");
    }
}
