package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.Signature;
import java.time.Clock;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Service-account tokens as Kubernetes issues them (TokenRequest API, {@code pkg/serviceaccount} claims): JWTs signed
 * RS256 by a key the server makes at start, with the claims {@code iss}, {@code sub}
 * ({@code system:serviceaccount:NS:NAME}), {@code aud}, {@code exp}, {@code iat}, {@code nbf}, {@code jti} and the
 * private claim {@code kubernetes.io}: {@code namespace}, {@code serviceaccount}, and the bound {@code pod},
 * {@code secret} or {@code node} (a pod's node too), each {@code {name, uid}}.
 *
 * <p>{@link #verify} checks only what the token itself proves: its form, the one algorithm (RS256: {@code none},
 * HMAC and every other header are refused), the signature, the issuer, the time window (with the real
 * authenticator's one minute of leeway) and that an audience is one the caller accepts. Whether the service account
 * and the bound object still exist is the {@link Authenticator}'s part.
 *
 * <p>What a token's signature proves never changes, so the claims of up to {@value #SIGNED_KEPT} tokens whose
 * signature checked are kept by the whole token's text (all are let go when it is full): a client sends the same
 * token with every request, and RSA costs more than the rest of a request's authentication. Everything that can
 * change (the time window, the audiences, and the Authenticator's checks of what the token is bound to) is checked
 * again on every request, so a kept token is refused the moment a token that was not kept would be.
 */
final class ServiceAccountTokens {

    /** The issuer, and the API server's own audience, as on a kubeadm cluster. */
    static final String ISSUER = "https://kubernetes.default.svc.cluster.local";

    static final List<String> API_AUDIENCES = List.of(ISSUER);

    /** A token larger than this is not read (real ones are about 1 KB). */
    static final int MAX_TOKEN_CHARS = 16 * 1024;

    /** How many tokens' verified claims are kept; all are let go when one more would pass it. */
    static final int SIGNED_KEPT = 1024;

    /** A token longer than this is verified every time, not kept (real ones are about 1 KB). */
    private static final int MAX_KEPT_TOKEN_CHARS = 4096;

    private static final long LEEWAY_SECONDS = 60;
    private static final ObjectMapper JSON = NestingDepth.mapper();
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64D = Base64.getUrlDecoder();

    private final KeyPair keys;
    private final String keyId;
    private final Clock clock;
    /** Token text → its claims, for tokens whose signature this server checked; never handed out. */
    private final Map<String, ObjectNode> signed = new ConcurrentHashMap<>();

    ServiceAccountTokens(Clock clock) {
        this.clock = clock;
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            keys = generator.generateKeyPair();
            keyId = B64.encodeToString(
                    MessageDigest.getInstance("SHA-256").digest(keys.getPublic().getEncoded()));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK cannot make an RSA key", e);
        }
    }

    /** A named object a token is bound to, as in its claims. */
    record Ref(String name, String uid) {}

    /**
     * A signed token.
     *
     * @param boundKind {@code pod}, {@code secret}, {@code node}, or null for an unbound token
     * @param node      the node of a bound pod, or null
     */
    String issue(
            String namespace,
            Ref serviceAccount,
            List<String> audiences,
            Instant expiry,
            String boundKind,
            Ref bound,
            Ref node) {
        long now = clock.instant().getEpochSecond();
        ObjectNode claims = JSON.createObjectNode();
        ArrayNode aud = claims.putArray("aud");
        audiences.forEach(aud::add);
        claims.put("exp", expiry.getEpochSecond()).put("iat", now).put("iss", ISSUER);
        claims.put("jti", UUID.randomUUID().toString());
        ObjectNode k8s = claims.putObject("kubernetes.io").put("namespace", namespace);
        if (boundKind != null) {
            ref(k8s, boundKind, bound);
        }
        if (node != null && !"node".equals(boundKind)) {
            ref(k8s, "node", node);
        }
        ref(k8s, "serviceaccount", serviceAccount);
        claims.put("nbf", now).put("sub", "system:serviceaccount:" + namespace + ":" + serviceAccount.name());
        ObjectNode header = JSON.createObjectNode().put("alg", "RS256").put("kid", keyId);
        try {
            String signingInput = B64.encodeToString(JSON.writeValueAsBytes(header)) + "."
                    + B64.encodeToString(JSON.writeValueAsBytes(claims));
            Signature rsa = Signature.getInstance("SHA256withRSA");
            rsa.initSign(keys.getPrivate());
            rsa.update(signingInput.getBytes(StandardCharsets.US_ASCII));
            return signingInput + "." + B64.encodeToString(rsa.sign());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException("cannot sign a token", e);
        }
    }

    private static void ref(ObjectNode k8s, String field, Ref ref) {
        k8s.putObject(field).put("name", ref.name()).put("uid", ref.uid());
    }

    /** Why a token proves nobody: the TokenReview's {@code status.error}. */
    static final class Invalid extends Exception {
        Invalid(String message) {
            super(message);
        }
    }

    /**
     * The claims of a token this server signed that is valid now for one of {@code audiences}.
     *
     * @throws Invalid saying why it is not
     */
    ObjectNode verify(String token, List<String> audiences) throws Invalid {
        if (token.length() > MAX_TOKEN_CHARS) {
            throw new Invalid("token is too large");
        }
        ObjectNode claims = signed.get(token);
        if (claims == null) {
            claims = signedClaims(token);
            if (token.length() <= MAX_KEPT_TOKEN_CHARS) {
                if (signed.size() >= SIGNED_KEPT) {
                    signed.clear();
                }
                signed.put(token, claims);
            }
        }
        if (!claims.path("iss").asText().equals(ISSUER)) {
            throw new Invalid("token issuer is not this server's");
        }
        long now = clock.instant().getEpochSecond();
        if (!claims.path("exp").canConvertToLong() || claims.path("exp").asLong() + LEEWAY_SECONDS < now) {
            throw new Invalid("service account token has expired");
        }
        if (claims.has("nbf") && claims.path("nbf").asLong() - LEEWAY_SECONDS > now) {
            throw new Invalid("service account token is not valid yet");
        }
        if (!intersects(audiences(claims), audiences)) {
            throw new Invalid(
                    "token audiences " + audiences(claims) + " is invalid for the target audiences " + audiences);
        }
        return claims.deepCopy(); // the kept claims are never handed out
    }

    /** The claims of a token this server signed, as the token says them: its form, header and signature checked. */
    private ObjectNode signedClaims(String token) throws Invalid {
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) {
            throw new Invalid("not a compact JWS");
        }
        JsonNode header = decode(parts[0]);
        if (!header.path("alg").asText().equals("RS256")
                || header.has("crit")
                || (header.has("kid") && !header.path("kid").asText().equals(keyId))) {
            throw new Invalid("unexpected signing algorithm or key");
        }
        try {
            Signature rsa = Signature.getInstance("SHA256withRSA");
            rsa.initVerify(keys.getPublic());
            rsa.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            if (!rsa.verify(B64D.decode(parts[2]))) {
                throw new Invalid("invalid signature");
            }
        } catch (IllegalArgumentException | GeneralSecurityException e) {
            throw new Invalid("invalid signature");
        }
        if (!(decode(parts[1]) instanceof ObjectNode claims)) {
            throw new Invalid("claims are not an object");
        }
        return claims;
    }

    /** How many tokens' verified claims are kept now. */
    int signedKept() {
        return signed.size();
    }

    /** The {@code aud} claim: a string or a list of strings. */
    static List<String> audiences(JsonNode claims) {
        JsonNode aud = claims.path("aud");
        if (aud.isTextual()) {
            return List.of(aud.asText());
        }
        List<String> out = new java.util.ArrayList<>();
        for (JsonNode a : aud) {
            if (a.isTextual()) {
                out.add(a.asText());
            }
        }
        return out;
    }

    static boolean intersects(List<String> a, List<String> b) {
        return a.stream().anyMatch(b::contains);
    }

    private static JsonNode decode(String part) throws Invalid {
        try {
            return JSON.readTree(B64D.decode(part));
        } catch (IllegalArgumentException | IOException e) {
            throw new Invalid("malformed token");
        }
    }
}
