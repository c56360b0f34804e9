package dev.drover.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Names;
import dev.drover.common.UserText;
import dev.drover.credentials.CredentialException;
import dev.drover.credentials.CredentialException.Reason;
import dev.drover.credentials.Credentials;
import dev.drover.credentials.ObjectRef;
import dev.drover.credentials.ServiceAccountToken;
import dev.drover.credentials.TypedSecret;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/**
 * {@link Credentials} over the Kubernetes API. Tokens are minted with the TokenRequest API through the agent's own
 * client, bound to the agent's Node (looked up once; again when the Node was recreated), so they stop working when
 * the node goes. Secrets and ConfigMaps are read with such a token only, over a client of their own
 * ({@link BearerHttp}) that carries none of the agent's credentials: the API server authorizes the allocation's
 * ServiceAccount, not the agent (which may not read Secrets at all). Answers are bounded ({@link #MAX_ANSWER_BYTES})
 * and so is the time a read takes. No message or log names a token or a value.
 */
public final class KubeCredentials implements Credentials, AutoCloseable {

    /** A Secret or ConfigMap holds at most 1 MiB; its JSON, base64 and all, stays far below this. */
    static final int MAX_ANSWER_BYTES = 3 << 20;

    /** How long a read may take, the answer read whole included. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

    /** Longest API server message a {@link CredentialException} repeats. */
    static final int MESSAGE_LIMIT = 500;

    /** Larger than this is no bearer token (real ones are about 1 KB). */
    static final int MAX_TOKEN_CHARS = 16 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final String node;
    private final URI base;
    private final HttpClient http;
    private final Duration readTimeout;
    private volatile String nodeUid;

    /** Credentials for the agent of {@code node}, over the API server {@code client} talks to. */
    public static KubeCredentials forNode(KubernetesClient client, String node) {
        return new KubeCredentials(client, node, client.getConfiguration(), READ_TIMEOUT);
    }

    /** Reads go to the API server {@code config} names, trusting what it trusts, with none of its credentials. */
    KubeCredentials(KubernetesClient client, String node, Config config, Duration readTimeout) {
        this.client = client;
        this.node = node;
        this.base = BearerHttp.base(config);
        this.http = BearerHttp.build(config);
        this.readTimeout = readTimeout;
    }

    @Override
    public ServiceAccountToken token(String namespace, String serviceAccount, String audience, long expirationSeconds)
            throws CredentialException {
        String what = "ServiceAccount " + name(namespace, Names::isLabel, "namespace") + "/"
                + name(serviceAccount, Names::isSubdomain, "ServiceAccount name");
        for (int attempt = 0; ; attempt++) {
            TokenRequest request = new TokenRequestBuilder()
                    .withNewSpec()
                    .withAudiences(audience == null ? List.of() : List.of(audience))
                    .withExpirationSeconds(expirationSeconds)
                    .withNewBoundObjectRef()
                    .withApiVersion("v1")
                    .withKind("Node")
                    .withName(node)
                    .withUid(nodeUid())
                    .endBoundObjectRef()
                    .endSpec()
                    .build();
            TokenRequest answer;
            try {
                answer = client.serviceAccounts()
                        .inNamespace(namespace)
                        .withName(serviceAccount)
                        .tokenRequest(request);
            } catch (KubernetesClientException e) {
                if (e.getCode() == 409 && attempt == 0) {
                    nodeUid = null; // the Node was recreated: bind to the new one
                    continue;
                }
                throw failed(e.getCode(), what, serverMessage(e), "mint a token for", e);
            }
            return minted(answer, what);
        }
    }

    private static ServiceAccountToken minted(TokenRequest answer, String what) throws CredentialException {
        var status = answer == null ? null : answer.getStatus();
        if (status == null || status.getToken() == null || status.getToken().isEmpty()) {
            throw new CredentialException(
                    Reason.UNAVAILABLE, "the API server answered a TokenRequest for " + what + " without a token");
        }
        try {
            return new ServiceAccountToken(status.getToken(), Instant.parse(status.getExpirationTimestamp()));
        } catch (DateTimeParseException | NullPointerException e) {
            throw new CredentialException(
                    Reason.UNAVAILABLE,
                    "the API server answered a TokenRequest for " + what + " with expirationTimestamp "
                            + UserText.quote(status.getExpirationTimestamp()) + ", which is no time");
        }
    }

    /** The uid of this agent's Node, read once (and again after {@link #token} found it recreated). */
    private String nodeUid() throws CredentialException {
        String uid = nodeUid;
        if (uid != null) {
            return uid;
        }
        NodeView found;
        try {
            found = NodeView.read(client, node);
        } catch (KubernetesClientException e) {
            throw failed(e.getCode(), "Node " + node, serverMessage(e), "read", e);
        }
        if (found == null || found.uid() == null) {
            throw new CredentialException(
                    Reason.NOT_FOUND, "this agent's Node " + node + " is not found; tokens are bound to it");
        }
        nodeUid = found.uid();
        return nodeUid;
    }

    @Override
    public Map<String, byte[]> read(ObjectRef ref, String token) throws CredentialException {
        return ObjectData.of(ref, fetch(ref, token));
    }

    @Override
    public TypedSecret secret(String namespace, String name, String token) throws CredentialException {
        ObjectRef ref = new ObjectRef(ObjectRef.Kind.Secret, namespace, name);
        byte[] body = fetch(ref, token);
        return new TypedSecret(ObjectData.type(body), ObjectData.of(ref, body));
    }

    /** The API server's answer for {@code ref}, read with {@code token}: 200's body, or a throw saying why not. */
    private byte[] fetch(ObjectRef ref, String token) throws CredentialException {
        String namespace = name(ref.namespace(), Names::isLabel, "namespace");
        String name = name(ref.name(), Names::isSubdomain, ref.kind() + " name");
        if (token == null
                || token.isEmpty()
                || token.length() > MAX_TOKEN_CHARS
                || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            throw new CredentialException(
                    Reason.INVALID, "the token to read " + ref + " with is no bearer token (one word of ASCII)");
        }
        String plural = ref.kind() == ObjectRef.Kind.Secret ? "secrets" : "configmaps";
        HttpRequest request = HttpRequest.newBuilder(
                        base.resolve("api/v1/namespaces/" + namespace + "/" + plural + "/" + name))
                .GET()
                .header("Authorization", "Bearer " + token)
                .header("Accept", "application/json")
                .timeout(readTimeout)
                .build();
        HttpResponse<byte[]> response = send(request, ref);
        if (response.statusCode() != 200) {
            String said = statusMessage(response.body());
            if (response.statusCode() == 404) {
                throw new CredentialException(
                        Reason.NOT_FOUND, ref + " not found" + (said.isEmpty() ? "" : ": " + said));
            }
            throw failed(response.statusCode(), ref.toString(), said, "read", null);
        }
        return response.body();
    }

    private HttpResponse<byte[]> send(HttpRequest request, ObjectRef ref) throws CredentialException {
        CompletableFuture<HttpResponse<byte[]>> sent = http.sendAsync(request, BoundedBody.handler(MAX_ANSWER_BYTES));
        try {
            // the request's own timeout ends at the answer's head; this one covers its body too
            return sent.get(readTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof BoundedBody.TooLarge) {
                throw new CredentialException(
                        Reason.INVALID,
                        "the API server's answer for " + ref + " is larger than " + MAX_ANSWER_BYTES
                                + " bytes; a Secret or ConfigMap holds at most 1 MiB",
                        cause);
            }
            String why = cause instanceof HttpTimeoutException
                    ? "no answer within " + readTimeout.toSeconds() + " s"
                    : cause.getClass().getSimpleName() + ": " + said(cause.getMessage());
            throw new CredentialException(
                    Reason.UNAVAILABLE, "cannot read " + ref + " from the API server at " + base + ": " + why, cause);
        } catch (TimeoutException e) {
            sent.cancel(true);
            throw new CredentialException(
                    Reason.UNAVAILABLE,
                    "cannot read " + ref + ": the API server's answer took more than " + readTimeout.toSeconds()
                            + " s");
        } catch (InterruptedException e) {
            sent.cancel(true);
            Thread.currentThread().interrupt();
            throw new CredentialException(Reason.UNAVAILABLE, "interrupted while reading " + ref);
        }
    }

    /** What a failed answer with HTTP status {@code code} means; 0 is no answer at all. */
    static Reason reason(int code) {
        return switch (code) {
            case 404 -> Reason.NOT_FOUND;
            case 401, 403 -> Reason.FORBIDDEN;
            case 0, 408, 429 -> Reason.UNAVAILABLE;
            default -> code >= 500 ? Reason.UNAVAILABLE : Reason.INVALID;
        };
    }

    private static CredentialException failed(int code, String what, String said, String verb, Throwable cause) {
        Reason reason = reason(code);
        String head = switch (reason) {
            case NOT_FOUND -> what + " not found";
            case FORBIDDEN ->
                code == 401
                        ? "cannot " + verb + " " + what + ": the API server took the token for nobody (expired,"
                                + " or its ServiceAccount or Node is gone)"
                        : "cannot " + verb + " " + what + ": forbidden";
            case UNAVAILABLE ->
                "cannot " + verb + " " + what + (code == 0 ? ": the API server cannot be reached" : ": HTTP " + code);
            case INVALID -> "cannot " + verb + " " + what + ": HTTP " + code;
        };
        String message = said.isEmpty() ? head : head + ": " + said;
        return cause == null
                ? new CredentialException(reason, message)
                : new CredentialException(reason, message, cause);
    }

    private static String serverMessage(KubernetesClientException e) {
        if (e.getStatus() != null && e.getStatus().getMessage() != null) {
            return said(e.getStatus().getMessage());
        }
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        return said(cause.getMessage());
    }

    /** The {@code message} of a Status answer, escaped and cut; empty when it has none. */
    private static String statusMessage(byte[] body) {
        try {
            JsonNode status = JSON.readTree(body);
            return status == null ? "" : said(status.path("message").asText(""));
        } catch (IOException e) {
            return "";
        }
    }

    /** A server's or library's text as a message repeats it: control characters escaped, cut. */
    static String said(String text) {
        if (text == null || text.isBlank()) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        String cut = UserText.cut(text.strip(), MESSAGE_LIMIT);
        for (int i = 0; i < cut.length(); i++) {
            char c = cut.charAt(i);
            out.append(c < 0x20 || c == 0x7f ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return out.toString();
    }

    /** {@code value} if it is a name of that form, which makes it safe in a URL path; else INVALID. */
    private static String name(String value, Predicate<String> form, String what) throws CredentialException {
        if (!form.test(value)) {
            throw new CredentialException(
                    Reason.INVALID, UserText.quote(value) + " is no valid " + what + " (a DNS-1123 name)");
        }
        return value;
    }

    HttpClient http() {
        return http;
    }

    /** Stops the read client's threads; reads still under way end with {@link Reason#UNAVAILABLE}. */
    @Override
    public void close() {
        http.shutdownNow();
        try {
            http.awaitTermination(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The data of a Secret or ConfigMap answer: Secret {@code data}, ConfigMap {@code data} and {@code binaryData}. */
    static final class ObjectData {
        private ObjectData() {}

        /** A Secret answer's {@code type} (escaped and cut: it is the user's text), or null when it has none. */
        static String type(byte[] body) {
            try {
                JsonNode object = JSON.readTree(body);
                JsonNode type = object == null ? null : object.get("type");
                return type == null || !type.isTextual() ? null : said(type.asText());
            } catch (IOException e) {
                return null; // of() says the answer is no JSON
            }
        }

        static Map<String, byte[]> of(ObjectRef ref, byte[] body) throws CredentialException {
            JsonNode object;
            try {
                object = JSON.readTree(body);
            } catch (IOException e) {
                throw new CredentialException(Reason.INVALID, "the API server's answer for " + ref + " is no JSON");
            }
            if (object == null || !ref.kind().name().equals(object.path("kind").asText())) {
                throw new CredentialException(
                        Reason.INVALID, "the API server's answer for " + ref + " is no " + ref.kind());
            }
            Map<String, byte[]> data = new LinkedHashMap<>();
            if (ref.kind() == ObjectRef.Kind.Secret) {
                decode(ref, object.path("data"), true, data);
            } else {
                decode(ref, object.path("data"), false, data);
                decode(ref, object.path("binaryData"), true, data);
            }
            return Collections.unmodifiableMap(data);
        }

        private static void decode(ObjectRef ref, JsonNode field, boolean base64, Map<String, byte[]> into)
                throws CredentialException {
            if (field.isMissingNode() || field.isNull()) {
                return;
            }
            if (!field.isObject()) {
                throw new CredentialException(Reason.INVALID, "the API server's " + ref + " has data that is no map");
            }
            for (var entry : field.properties()) {
                String key = entry.getKey();
                JsonNode value = entry.getValue();
                if (!value.isTextual() || into.containsKey(key)) {
                    throw new CredentialException(
                            Reason.INVALID,
                            "the API server's " + ref + " has key " + UserText.quote(key)
                                    + (value.isTextual() ? " twice" : " with a value that is no string"));
                }
                try {
                    into.put(
                            key,
                            base64
                                    ? Base64.getDecoder().decode(value.asText())
                                    : value.asText().getBytes(StandardCharsets.UTF_8));
                } catch (IllegalArgumentException e) {
                    throw new CredentialException(
                            Reason.INVALID,
                            "the API server's " + ref + " has key " + UserText.quote(key) + " that is no base64");
                }
            }
        }
    }
}
