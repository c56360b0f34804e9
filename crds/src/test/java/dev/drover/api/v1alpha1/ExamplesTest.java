package dev.drover.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.validation.AllocationValidator;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ExamplesTest {

    static Stream<Path> examples() throws IOException {
        try (Stream<Path> files = Stream.concat(
                Files.list(Path.of("..", "examples")), Files.list(Path.of("..", "examples", "secrets")))) {
            List<Path> allocations = files.filter(p -> p.toString().endsWith(".yaml"))
                    .filter(ExamplesTest::isAllocation)
                    .sorted()
                    .toList();
            assertThat(allocations).hasSizeGreaterThanOrEqualTo(6);
            return allocations.stream();
        }
    }

    private static boolean isAllocation(Path p) {
        try {
            return Files.readString(p).contains("kind: Allocation");
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    @ParameterizedTest
    @MethodSource("examples")
    void everyExampleParsesAndIsValid(Path file) throws IOException {
        Allocation a = Serialization.unmarshal(Files.readString(file), Allocation.class);
        assertThat(a.getSpec().getNodeName()).isEqualTo("local");
        assertThat(AllocationValidator.validate(a)).as(file.toString()).isEmpty();
    }
}
