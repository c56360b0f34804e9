package dev.drover.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * A user name and password (or an identity token as password) for one registry, as a
 * {@code kubernetes.io/dockerconfigjson} Secret holds them. Its {@code toString} never shows the password.
 */
public record RegistryCredentials(String username, String password) {

    /** A Secret's {@code .dockerconfigjson} is refused above this: real ones are a few kilobytes. */
    static final int MAX_CONFIG_BYTES = 256 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The value of an {@code Authorization: Basic} header with these credentials. */
    String basic() {
        return "Basic "
                + Base64.getEncoder().encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "RegistryCredentials[username=" + UserText.quote(username) + ", password=(hidden)]";
    }

    /**
     * The credentials a Docker config ({@code {"auths": {KEY: {auth | username, password}}}}) holds for
     * {@code registry}, matching keys as the kubelet does: the host alone, or a URL of it ({@code https://host/v1/});
     * Docker Hub also as {@code index.docker.io}. Throws when the config cannot be read, naming what is wrong but
     * never a secret's value.
     */
    public static Optional<RegistryCredentials> fromDockerConfig(byte[] config, String registry) throws IOException {
        if (config.length > MAX_CONFIG_BYTES) {
            throw new IOException("the Docker config is larger than " + MAX_CONFIG_BYTES + " bytes");
        }
        JsonNode root;
        try {
            root = JSON.readTree(config);
        } catch (IOException e) {
            throw new IOException("the Docker config is not JSON");
        }
        JsonNode auths = root == null ? null : root.get("auths");
        if (auths == null || !auths.isObject()) {
            throw new IOException("the Docker config has no \"auths\" object");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = auths.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (hostOf(e.getKey()).equals(registry)
                    || (registry.equals(ImageReference.DOCKER_HUB)
                            && hostOf(e.getKey()).equals("index.docker.io"))) {
                return Optional.of(read(e.getKey(), e.getValue()));
            }
        }
        return Optional.empty();
    }

    private static RegistryCredentials read(String key, JsonNode entry) throws IOException {
        String where = "the Docker config's entry for " + UserText.quote(key);
        if (entry.hasNonNull("auth")) {
            String decoded;
            try {
                decoded =
                        new String(Base64.getDecoder().decode(entry.get("auth").asText()), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new IOException(where + " has an \"auth\" that is not base64");
            }
            int colon = decoded.indexOf(':');
            if (colon < 0) {
                throw new IOException(where + " has an \"auth\" that is not user:password");
            }
            return new RegistryCredentials(decoded.substring(0, colon), decoded.substring(colon + 1));
        }
        if (entry.hasNonNull("username") && entry.hasNonNull("password")) {
            return new RegistryCredentials(
                    entry.get("username").asText(), entry.get("password").asText());
        }
        throw new IOException(where + " has neither \"auth\" nor \"username\" and \"password\"");
    }

    /** The host (and port) of a config key: {@code https://r.io:5000/v1/} and {@code r.io:5000} both give r.io:5000. */
    private static String hostOf(String key) {
        String k = key;
        int scheme = k.indexOf("://");
        if (scheme >= 0) {
            k = k.substring(scheme + 3);
        }
        int slash = k.indexOf('/');
        return slash < 0 ? k : k.substring(0, slash);
    }
}
