package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class AllocIdTest {

    @Test
    void keyRoundTripsThroughParse() {
        AllocId id = new AllocId("team-a", "web-0");

        assertThat(id.key()).isEqualTo("team-a/web-0");
        assertThat(AllocId.parse(id.key())).isEqualTo(id);
        assertThat(id.taskKey("main")).isEqualTo("team-a/web-0/main");
    }

    @Test
    void namesThatCouldEscapeADirectoryAreRejectedNamingTheField() {
        assertThatThrownBy(() -> new AllocId("default", "../x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name '../x'")
                .hasMessageContaining("DNS-1123");
        assertThatThrownBy(() -> new AllocId("Default", "web")).hasMessageContaining("namespace 'Default'");
        assertThatThrownBy(() -> new AllocId("default", "a".repeat(254))).hasMessageContaining("at most 253");
        assertThatThrownBy(() -> new AllocId("default", "")).hasMessageContaining("name must not be empty");
        assertThatThrownBy(() -> AllocId.parse("web")).hasMessageContaining("namespace/name");
        assertThatThrownBy(() -> AllocId.parse("default/web/main")).hasMessageContaining("name 'web/main'");
    }

    @Test
    void namesMayHaveDotsAsKubernetesObjectNamesDo() {
        assertThat(new AllocId("default", "web.v1").key()).isEqualTo("default/web.v1");
        for (String bad : new String[] {"..", ".", "a..b", ".a", "a.", "a/b"}) {
            assertThatThrownBy(() -> new AllocId("default", bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("DNS-1123 subdomain");
        }
    }

    /** Item 24: the API server takes any DNS-1123 subdomain; a part longer than 63 was refused here, so never run. */
    @Test
    void everyNameTheApiServerAcceptsIsAnId() {
        String longPart = "a".repeat(100) + ".b";
        assertThat(new AllocId("default", longPart).key()).isEqualTo("default/" + longPart);
        String longest = "x".repeat(120) + "." + "y".repeat(132);
        assertThat(longest).hasSize(253);
        assertThat(AllocId.parse("default/" + longest).name()).isEqualTo(longest);
    }
}
