package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A client that accepts only protobuf gets a clear 406 from the local API server, as from kube-apiserver. */
class MediaTypesTest {

    static final String PROTOBUF = "application/vnd.kubernetes.protobuf";
    static final ObjectMapper JSON = new ObjectMapper();

    static LocalApiServer server;
    static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("a")));
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
    }

    @AfterAll
    static void stop() {
        if (http != null) {
            http.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static HttpResponse<String> get(String path, String... accept) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(server.url().resolve(path))
                .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN);
        for (String a : accept) {
            request.header("Accept", a);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void protobufAloneIsNotAcceptableAndTheStatusSaysWhatIs() throws Exception {
        HttpResponse<String> r = get("/api/v1/nodes", PROTOBUF);

        assertThat(r.statusCode()).isEqualTo(406);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode status = JSON.readTree(r.body());
        assertThat(status.path("kind").asText()).isEqualTo("Status");
        assertThat(status.path("reason").asText()).isEqualTo("NotAcceptable");
        assertThat(status.path("code").asInt()).isEqualTo(406);
        assertThat(status.path("message").asText())
                .isEqualTo("only the following media types are accepted: application/json");
    }

    @Test
    void protobufWithJsonAsAnAlternativeGetsJson() throws Exception {
        HttpResponse<String> r = get("/api/v1/nodes/a", PROTOBUF + ", application/json");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).path("metadata").path("name").asText())
                .isEqualTo("a");
    }

    @Test
    void watchesAndCustomResourcesNegotiateToo() throws Exception {
        assertThat(get("/apis/drover.dev/v1alpha1/allocations?watch=true&timeoutSeconds=1", PROTOBUF + ";stream=watch")
                        .statusCode())
                .isEqualTo(406);
        assertThat(get("/apis/drover.dev/v1alpha1/allocations", PROTOBUF).statusCode())
                .isEqualTo(406);
        assertThat(get("/version", PROTOBUF).statusCode()).isEqualTo(406);
    }

    @Test
    void whatKubectlAndFabric8SendIsServedAsBefore() throws Exception {
        assertThat(get("/api/v1/nodes").statusCode()).as("no Accept").isEqualTo(200);
        assertThat(get("/api/v1/nodes", "*/*").statusCode()).isEqualTo(200);
        assertThat(get(
                                "/api/v1/nodes",
                                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                                        + "g=meta.k8s.io,application/json")
                        .statusCode())
                .isEqualTo(200);
        assertThat(get("/api/v1/nodes", PROTOBUF, "application/json").statusCode())
                .as("Accept given twice")
                .isEqualTo(200);
    }

    @Test
    void rangesThatRuleJsonOutAreNotAcceptable() {
        assertThat(MediaTypes.acceptsJson(List.of("application/json;q=0"))).isFalse();
        assertThat(MediaTypes.acceptsJson(List.of("application/yaml"))).isFalse();
        assertThat(MediaTypes.acceptsJson(List.of("text/html, application/*;q=0.5")))
                .isTrue();
        assertThat(MediaTypes.acceptsJson(List.of("application/json;q=oops"))).isFalse();
        String[] many = new String[MediaTypes.MAX_RANGES + 5];
        Arrays.fill(many, PROTOBUF);
        many[many.length - 1] = "application/json";
        assertThat(MediaTypes.acceptsJson(List.of(String.join(",", many))))
                .as("a huge Accept is read only so far")
                .isFalse();
    }
}
