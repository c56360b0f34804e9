package dev.drover.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Reading {@code .dockerconfigjson} documents as a hostile tenant might write them. */
class DockerConfigTest {

    private static DockerConfig parse(String json) throws Exception {
        return DockerConfig.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void keysMayBeAHostAHostWithAPortOrAUrlOfIt() throws Exception {
        DockerConfig c = parse("{\"auths\":{"
                + "\"https://Registry.Example.com/v1/\":{\"auth\":\"" + b64("a:pa") + "\"},"
                + "\"r.io:5000\":{\"username\":\"b\",\"password\":\"pb\"},"
                + "\"plain.io\":{\"auth\":\"" + b64("c:p:c") + "\",\"email\":\"x@y\"}}}");
        assertThat(c.forRegistry("registry.example.com")).contains(new RegistryCredentials("a", "pa"));
        assertThat(c.forRegistry("r.io:5000")).contains(new RegistryCredentials("b", "pb"));
        assertThat(c.forRegistry("r.io")).as("another port is another registry").isEmpty();
        assertThat(c.forRegistry("plain.io"))
                .as("the password is all after the first colon")
                .contains(new RegistryCredentials("c", "p:c"));
    }

    @Test
    void dockerHubIsFoundByAnyOfItsNames() throws Exception {
        for (String key :
                List.of("https://index.docker.io/v1/", "index.docker.io", "registry-1.docker.io", "docker.io")) {
            DockerConfig c = parse("{\"auths\":{\"" + key + "\":{\"auth\":\"" + b64("hub:hp") + "\"}}}");
            assertThat(c.forRegistry(ImageReference.DOCKER_HUB)).as(key).contains(new RegistryCredentials("hub", "hp"));
            assertThat(c.forRegistry("registry-1.docker.io")).as(key).isPresent();
            assertThat(c.forRegistry("quay.io")).as(key).isEmpty();
        }
    }

    @Test
    void theFirstSecretThatNamesTheRegistryIsChosen() throws Exception {
        DockerConfig other = parse("{\"auths\":{\"quay.io\":{\"auth\":\"" + b64("q:1") + "\"}}}");
        DockerConfig first = parse("{\"auths\":{\"r.io\":{\"auth\":\"" + b64("first:1") + "\"}}}");
        DockerConfig second = parse("{\"auths\":{\"r.io\":{\"auth\":\"" + b64("second:2") + "\"}}}");
        assertThat(DockerConfig.choose(List.of(other, first, second), "r.io"))
                .contains(new RegistryCredentials("first", "1"));
        assertThat(DockerConfig.choose(List.of(other), "r.io")).isEqualTo(Optional.empty());
        assertThat(DockerConfig.choose(List.of(), "r.io")).isEmpty();
    }

    @Test
    void hostileDocumentsAreRefusedSayingWhyWithoutThePassword() {
        String password = "hunter2-TOP-SECRET";
        List<String> refused = List.of(
                "[]",
                "{\"auths\":[]}",
                "{\"auths\":{\"r.io\":\"" + password + "\"}}",
                "{\"auths\":{\"r.io\":{\"auth\":\"" + password + "!!\"}}}",
                "{\"auths\":{\"r.io\":{\"auth\":\"" + b64(password) + "\"}}}",
                "{\"auths\":{\"r.io\":{\"auth\":\"" + b64(":" + password) + "\"}}}",
                "{\"auths\":{\"r.io\":{\"auth\":\"" + b64("u\n:" + password) + "\"}}}",
                "{\"auths\":{\"r.io\":{\"username\":\"u\",\"password\":\"" + password + "\\r\\nX-Evil: 1\"}}}",
                "{\"auths\":{\"r.io\":{\"username\":\"u\",\"password\":7}}}",
                "{\"auths\":{\"r.io\":{\"username\":\"a:b\",\"password\":\"" + password + "\"}}}",
                "{\"auths\":{\"r.io\":{\"auth\":\"" + b64("u:" + password) + "\"},\"r.io\":{}}}",
                "{\"auths\":{\"\":{\"auth\":\"" + b64("u:" + password) + "\"}}}",
                "{\"auths\":{\"https:///v1/\":{\"auth\":\"" + b64("u:" + password) + "\"}}}",
                "{\"auths\":{\"r.io\":{\"password\":\"" + password + "\"}}}",
                "{\"auths\":{\"r.io\":{\"auth\":\"" + b64("u:" + password) + "\"}}" + " trailing {\"" + password);
        for (String doc : refused) {
            assertThatThrownBy(() -> parse(doc))
                    .as(doc)
                    .hasMessageStartingWith("the Docker config")
                    .hasMessageNotContaining(password)
                    .hasMessageNotContaining(b64(password).substring(0, 8));
        }
        assertThatThrownBy(() -> parse("{\"auths\":{\"r.io\":{\"auth\":\"" + b64(password) + "\"}}}"))
                .hasMessage("the Docker config's entry for \"r.io\" has an \"auth\" that is not user:password");
    }

    @Test
    void sizeEntriesDepthAndLengthsAreBounded() {
        assertThatThrownBy(() -> DockerConfig.parse(new byte[DockerConfig.MAX_BYTES + 1]))
                .hasMessage("the Docker config is larger than 262144 bytes");
        StringBuilder many = new StringBuilder("{\"auths\":{");
        for (int i = 0; i <= DockerConfig.MAX_ENTRIES; i++) {
            many.append(i == 0 ? "" : ",").append("\"r").append(i).append(".io\":{\"auth\":\"dTpw\"}");
        }
        assertThatThrownBy(() -> parse(many + "}}"))
                .hasMessage("the Docker config lists 257 registries; at most 256 are read");
        assertThatThrownBy(() -> parse("{\"auths\":" + "[".repeat(5000) + "]".repeat(5000) + "}"))
                .hasMessage("the Docker config is not JSON");
        String longKey = "r".repeat(600) + ".io";
        assertThatThrownBy(() -> parse("{\"auths\":{\"" + longKey + "\":{\"auth\":\"dTpw\"}}}"))
                .hasMessageContaining("longer than 512 characters")
                .hasMessageNotContaining(longKey);
        String longPassword = "p".repeat(DockerConfig.MAX_PASSWORD + 1);
        assertThatThrownBy(() ->
                        parse("{\"auths\":{\"r.io\":{\"username\":\"u\",\"password\":\"" + longPassword + "\"}}}"))
                .hasMessage("the Docker config's entry for \"r.io\" has a password longer than 65536 characters");
    }

    @Test
    void credentialsNeverShowTheirPassword() {
        assertThat(new RegistryCredentials("u", "p:w").toString()).doesNotContain("p:w");
    }
}
