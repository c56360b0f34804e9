package dev.drover.image;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The credentials a {@code kubernetes.io/dockerconfigjson} Secret holds ({@code {"auths": {KEY: {auth | username,
 * password}}}}), by registry host. Keys are matched as the kubelet matches them: the host alone, with its port, or a
 * URL of it ({@code https://host/v1/}); Docker Hub by any of its names. Hostile documents are refused before they
 * cost much (size, entries, lengths), and no message repeats a password or an {@code auth} value.
 */
public final class DockerConfig {

    /** A {@code .dockerconfigjson} is refused above this: real ones are a few kilobytes. */
    public static final int MAX_BYTES = 256 * 1024;
    /** The most registries one config may list. */
    static final int MAX_ENTRIES = 256;
    /** The longest key (a host, or a URL of it) read. */
    static final int MAX_KEY = 512;
    /** The longest user name read. */
    static final int MAX_USERNAME = 1024;
    /** The longest password read: cloud registries' tokens run to a few kilobytes. */
    static final int MAX_PASSWORD = 64 * 1024;
    /** How deep the JSON may nest: an auths entry is three levels down. */
    private static final int MAX_DEPTH = 16;

    /** Docker Hub's names, any of which a config may use for it. */
    private static final Set<String> DOCKER_HUB =
            Set.of(ImageReference.DOCKER_HUB, "index.docker.io", ImageReference.DOCKER_HUB_API);

    private static final ObjectMapper JSON = new ObjectMapper();

    static {
        JSON.getFactory()
                .setStreamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_DEPTH)
                        .maxStringLength(MAX_BYTES)
                        .build());
        JSON.getFactory().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    }

    /** By host (lower case, with its port if the key has one), in the config's order. */
    private final Map<String, RegistryCredentials> byHost;

    private DockerConfig(Map<String, RegistryCredentials> byHost) {
        this.byHost = byHost;
    }

    /** Reads a {@code .dockerconfigjson}; throws saying what is wrong with it, never with a secret's value. */
    public static DockerConfig parse(byte[] config) throws IOException {
        if (config.length > MAX_BYTES) {
            throw new IOException("the Docker config is larger than " + MAX_BYTES + " bytes");
        }
        JsonNode root;
        try {
            root = JSON.readTree(config);
        } catch (IOException e) {
            throw new IOException("the Docker config is not JSON"); // the parser's message may quote a value
        }
        JsonNode auths = root == null ? null : root.get("auths");
        if (auths == null || !auths.isObject()) {
            throw new IOException("the Docker config has no \"auths\" object");
        }
        if (auths.size() > MAX_ENTRIES) {
            throw new IOException(
                    "the Docker config lists " + auths.size() + " registries; at most " + MAX_ENTRIES + " are read");
        }
        Map<String, RegistryCredentials> byHost = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : auths.properties()) {
            String host = hostOf(e.getKey());
            RegistryCredentials creds = read(e.getKey(), e.getValue());
            byHost.putIfAbsent(host, creds);
        }
        return new DockerConfig(byHost);
    }

    /**
     * The credentials of the first config (in {@code imagePullSecrets} order) that has some for {@code registry}, as
     * the kubelet picks them; empty when none has.
     */
    public static Optional<RegistryCredentials> choose(List<DockerConfig> configs, String registry) {
        for (DockerConfig c : configs) {
            Optional<RegistryCredentials> found = c.forRegistry(registry);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /** As {@link #choose}, over the documents themselves; throws when one cannot be read. */
    public static Optional<RegistryCredentials> first(List<String> documents, String registry) throws IOException {
        List<DockerConfig> configs = new java.util.ArrayList<>();
        for (String d : documents) {
            configs.add(parse(d.getBytes(StandardCharsets.UTF_8)));
        }
        return choose(configs, registry);
    }

    /** The credentials for {@code registry} (a host, with its port if it has one), if the config has some. */
    public Optional<RegistryCredentials> forRegistry(String registry) {
        String want = registry.toLowerCase(Locale.ROOT);
        RegistryCredentials exact = byHost.get(want);
        if (exact != null || !DOCKER_HUB.contains(want)) {
            return Optional.ofNullable(exact);
        }
        for (Map.Entry<String, RegistryCredentials> e : byHost.entrySet()) {
            if (DOCKER_HUB.contains(e.getKey())) {
                return Optional.of(e.getValue());
            }
        }
        return Optional.empty();
    }

    /** How many registries the config has credentials for. */
    public int size() {
        return byHost.size();
    }

    private static RegistryCredentials read(String key, JsonNode entry) throws IOException {
        String where = "the Docker config's entry for " + UserText.quote(UserText.cut(key, 100));
        if (!entry.isObject()) {
            throw new IOException(where + " is not an object");
        }
        JsonNode auth = entry.get("auth");
        if (auth != null
                && !auth.isNull()
                && !(auth.isTextual() && auth.asText().isEmpty())) {
            if (!auth.isTextual() || auth.asText().length() > (MAX_USERNAME + MAX_PASSWORD + 1) * 4 / 3 + 4) {
                throw new IOException(
                        where + " has an \"auth\" that is not a string of base64 user:password, or is" + " too long");
            }
            String decoded;
            try {
                decoded = utf8(Base64.getDecoder().decode(auth.asText().strip()));
            } catch (IllegalArgumentException | CharacterCodingException e) {
                throw new IOException(where + " has an \"auth\" that is not base64 of UTF-8 text");
            }
            int colon = decoded.indexOf(':');
            if (colon < 0) {
                throw new IOException(where + " has an \"auth\" that is not user:password");
            }
            return credentials(where, decoded.substring(0, colon), decoded.substring(colon + 1));
        }
        JsonNode user = entry.get("username");
        JsonNode password = entry.get("password");
        if (user != null && user.isTextual() && password != null && password.isTextual()) {
            return credentials(where, user.asText(), password.asText());
        }
        throw new IOException(where + " has neither \"auth\" nor \"username\" and \"password\" as strings");
    }

    private static RegistryCredentials credentials(String where, String user, String password) throws IOException {
        if (user.isEmpty() || user.length() > MAX_USERNAME) {
            throw new IOException(where + " has a user name that is empty or longer than " + MAX_USERNAME);
        }
        if (user.indexOf(':') >= 0 || user.chars().anyMatch(DockerConfig::control)) {
            throw new IOException(where + " has a user name with ':' or a control character");
        }
        if (password.length() > MAX_PASSWORD) {
            throw new IOException(where + " has a password longer than " + MAX_PASSWORD + " characters");
        }
        if (password.chars().anyMatch(DockerConfig::control)) {
            throw new IOException(where + " has a password with a control character");
        }
        return new RegistryCredentials(user, password);
    }

    /**
     * The host (and port) of a config key, lower case: {@code https://R.io:5000/v1/} and {@code r.io:5000} both give
     * {@code r.io:5000}.
     */
    static String hostOf(String key) throws IOException {
        if (key.isEmpty() || key.length() > MAX_KEY || key.chars().anyMatch(DockerConfig::control)) {
            throw new IOException("the Docker config has a registry key that is empty, longer than " + MAX_KEY
                    + " characters or holds a control character: " + UserText.quote(UserText.cut(key, 100)));
        }
        String k = key;
        int scheme = k.indexOf("://");
        if (scheme >= 0) {
            k = k.substring(scheme + 3);
        }
        int slash = k.indexOf('/');
        String host = (slash < 0 ? k : k.substring(0, slash)).toLowerCase(Locale.ROOT);
        if (host.isEmpty()) {
            throw new IOException("the Docker config's key " + UserText.quote(key) + " names no host");
        }
        return host;
    }

    private static boolean control(int c) {
        return c < 0x20 || c == 0x7f;
    }

    private static String utf8(byte[] bytes) throws CharacterCodingException {
        return StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes))
                .toString();
    }
}
