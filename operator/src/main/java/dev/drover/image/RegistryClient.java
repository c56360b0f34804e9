package dev.drover.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Optional;
import java.util.function.LongConsumer;
import javax.net.ssl.SSLContext;

/**
 * Talks to OCI distribution registries over HTTPS: manifests and blobs of one repository, as anonymous callers or
 * with credentials, answering the registry's {@code WWW-Authenticate} challenge ({@code Basic}, or {@code Bearer} with
 * a token from the realm it names, cached until it expires for that repository and those credentials alone). Every answer is read under a bound; blobs are written
 * to a file as they come and checked against their digest and size before the caller may use them. Redirects (blob
 * stores behind a CDN) are followed by hand: credentials never go to another host, nor over plain HTTP.
 */
public final class RegistryClient implements AutoCloseable {

    /** A token answer larger than this is refused. */
    static final int MAX_TOKEN_BYTES = 64 * 1024;
    /** An error answer is read up to this much for its message. */
    static final int MAX_ERROR_BYTES = 16 * 1024;

    static final int MAX_REDIRECTS = 5;
    /** A token without {@code expires_in} lives 60 s, as the distribution spec says. */
    private static final Duration DEFAULT_TOKEN_LIFE = Duration.ofSeconds(60);

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A manifest as served: its bytes, its media type and the digest of its bytes. */
    public record Fetched(byte[] body, String mediaType, Digest digest) {}

    private record Token(String header, Instant expires) {}

    /** Basic credentials are sent again without asking for an hour before the registry is asked to challenge. */
    private static final Duration BASIC_LIFE = Duration.ofHours(1);

    private final HttpClient http;
    private final Duration timeout;
    private final InstantSource clock;
    private final AuthCache tokens;

    /** @param tls trusts the system's CAs and the agent's {@code registryCAFile} */
    public RegistryClient(SSLContext tls, Duration timeout, InstantSource clock) {
        this.http = HttpClient.newBuilder()
                .sslContext(tls)
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
        this.timeout = timeout;
        this.clock = clock;
        this.tokens = new AuthCache(clock);
    }

    /**
     * The manifest (or index) {@code reference} (a tag or {@code sha256:} digest) of {@code image}'s repository,
     * from {@code host}. A manifest asked for by digest must have that digest.
     */
    public Fetched manifest(String host, ImageReference image, String reference, Optional<RegistryCredentials> creds)
            throws IOException, InterruptedException {
        URI uri = uri(host, image, "/manifests/" + reference);
        HttpResponse<InputStream> r = send(uri, "GET", image, creds, Manifests.ACCEPT);
        try (InputStream body = r.body()) {
            byte[] bytes = Bounded.read(body, Manifests.MAX_BYTES, "the manifest of " + image);
            Digest digest = Digest.of(bytes);
            if (reference.startsWith("sha256:") && !digest.toString().equals(reference)) {
                throw new ImagePullException("the registry sent a manifest of digest " + digest + " for " + reference
                        + ": refused (tampered with on the way, or a broken registry)");
            }
            String type =
                    Manifests.mediaType(r.headers().firstValue("Content-Type").orElse(null), bytes);
            return new Fetched(bytes, type, digest);
        }
    }

    /**
     * Writes blob {@code d} of {@code image}'s repository to {@code target} (created new), calling {@code progress}
     * with the bytes written so far. The file is removed unless it holds exactly {@code d.size()} bytes of digest
     * {@code d.digest()}.
     */
    public void blob(
            String host,
            ImageReference image,
            Descriptor d,
            Optional<RegistryCredentials> creds,
            Path target,
            LongConsumer progress)
            throws IOException, InterruptedException {
        HttpResponse<InputStream> r = send(uri(host, image, "/blobs/" + d.digest()), "GET", image, creds, "*/*");
        boolean kept = false;
        try (InputStream in = r.body();
                OutputStream out = Files.newOutputStream(target, StandardOpenOption.CREATE_NEW)) {
            MessageDigest sha = Digest.sha256();
            byte[] buf = new byte[64 * 1024];
            long total = 0;
            long told = 0;
            for (int n; (n = in.read(buf)) > 0; ) {
                total += n;
                if (total > d.size()) {
                    throw new ImagePullException("blob " + d.digest() + " of " + image + " is larger than the "
                            + d.size() + " bytes its manifest gives: refused");
                }
                sha.update(buf, 0, n);
                out.write(buf, 0, n);
                if (total - told >= 1 << 20) {
                    progress.accept(total);
                    told = total;
                }
            }
            if (total != d.size()) {
                throw new ImagePullException("blob " + d.digest() + " of " + image + " ended after " + total
                        + " of its " + d.size() + " bytes");
            }
            if (!d.digest().matches(sha)) {
                throw new ImagePullException("blob " + d.digest() + " of " + image + " does not have that digest:"
                        + " refused (tampered with on the way, or a broken registry)");
            }
            progress.accept(total);
            kept = true;
        } finally {
            if (!kept) {
                Files.deleteIfExists(target);
            }
        }
    }

    /** Sends a request, answering one authentication challenge and following redirects; a 2xx answer or a throw. */
    private HttpResponse<InputStream> send(
            URI uri, String method, ImageReference image, Optional<RegistryCredentials> creds, String accept)
            throws IOException, InterruptedException {
        // keyed by the credentials too: what one Secret won never answers for another's (or no) credentials
        AuthCache.Key scopeKey = AuthCache.Key.of(uri.getAuthority(), image.repository(), creds);
        String auth = tokens.get(scopeKey);
        HttpResponse<InputStream> r = follow(uri, method, auth, accept, image);
        if (r.statusCode() == 401) {
            tokens.forget(scopeKey);
            Optional<Challenge> challenge =
                    Challenge.parse(r.headers().firstValue("WWW-Authenticate").orElse(null));
            discard(r);
            auth = authorize(uri, challenge, image, creds, scopeKey);
            r = follow(uri, method, auth, accept, image);
            if (r.statusCode() == 401 || r.statusCode() == 403) {
                discard(r);
                throw new ImagePullException(
                        creds.isPresent()
                                ? "the registry " + uri.getAuthority() + " refused the credentials for " + image
                                : "the registry " + uri.getAuthority() + " asks for credentials for " + image
                                        + ": name a Secret in spec.imagePullSecrets");
            }
        }
        if (r.statusCode() / 100 != 2) {
            throw failure(r, image);
        }
        return r;
    }

    /** The Authorization header that answers {@code challenge}. */
    private String authorize(
            URI uri,
            Optional<Challenge> challenge,
            ImageReference image,
            Optional<RegistryCredentials> creds,
            AuthCache.Key scopeKey)
            throws IOException, InterruptedException {
        if (challenge.isEmpty()) {
            throw new ImagePullException(
                    "the registry " + uri.getAuthority() + " refused the request (401) without a challenge to answer");
        }
        Challenge c = challenge.get();
        switch (c.scheme()) {
            case "basic" -> {
                if (creds.isEmpty()) {
                    throw new ImagePullException("the registry " + uri.getAuthority() + " asks for credentials for "
                            + image + ": name a Secret in spec.imagePullSecrets");
                }
                String basic = creds.get().basic();
                tokens.put(scopeKey, basic, clock.instant().plus(BASIC_LIFE));
                return basic;
            }
            case "bearer" -> {
                Token t = token(c, image, creds);
                tokens.put(scopeKey, t.header(), t.expires());
                return t.header();
            }
            default ->
                throw new ImagePullException("the registry " + uri.getAuthority() + " asks for authentication by "
                        + UserText.quote(c.scheme()) + ", which Drover does not speak");
        }
    }

    /** A bearer token for pulling {@code image}, from the realm the challenge names (HTTPS only). */
    private Token token(Challenge c, ImageReference image, Optional<RegistryCredentials> creds)
            throws IOException, InterruptedException {
        String realm = c.param("realm");
        URI realmUri;
        try {
            realmUri = realm == null ? null : URI.create(realm);
        } catch (IllegalArgumentException e) {
            realmUri = null;
        }
        if (realmUri == null || !"https".equals(realmUri.getScheme()) || realmUri.getHost() == null) {
            throw new ImagePullException("the registry names a token realm " + UserText.quote(realm)
                    + " that is not an https:// URL: refused");
        }
        StringBuilder query = new StringBuilder();
        if (c.param("service") != null) {
            query.append("service=").append(encode(c.param("service"))).append('&');
        }
        query.append("scope=").append(encode("repository:" + image.repository() + ":pull"));
        String base = realm + (realm.contains("?") ? "&" : "?");
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + query))
                .timeout(timeout)
                .GET();
        creds.ifPresent(cr -> request.header("Authorization", cr.basic()));
        HttpResponse<InputStream> r = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        byte[] body;
        try (InputStream in = r.body()) {
            body = Bounded.read(in, MAX_TOKEN_BYTES, "the token answer");
        }
        if (r.statusCode() == 401 || r.statusCode() == 403) {
            throw new ImagePullException("the token service " + realmUri.getHost()
                    + (creds.isPresent() ? " refused the credentials for " : " refused an anonymous pull of ")
                    + image);
        }
        if (r.statusCode() / 100 != 2) {
            throw new ImagePullException(
                    "the token service " + realmUri.getHost() + " answered " + r.statusCode() + " for " + image);
        }
        JsonNode json;
        try {
            json = JSON.readTree(body);
        } catch (IOException e) {
            json = null;
        }
        String token = json == null
                ? null
                : json.path("token").asText(json.path("access_token").asText(null));
        if (token == null || token.isEmpty() || token.chars().anyMatch(ch -> ch < 0x21 || ch > 0x7e)) {
            throw new ImagePullException("the token service " + realmUri.getHost() + " sent no usable token");
        }
        long life = json.path("expires_in").asLong(DEFAULT_TOKEN_LIFE.toSeconds());
        Instant expires = clock.instant().plusSeconds(Math.max(1, Math.min(life, 3600) - 5));
        return new Token("Bearer " + token, expires);
    }

    /** Sends one request, following redirects by hand; Authorization goes only to the registry's own host. */
    private HttpResponse<InputStream> follow(URI uri, String method, String auth, String accept, ImageReference image)
            throws IOException, InterruptedException {
        URI at = uri;
        for (int hop = 0; ; hop++) {
            HttpRequest.Builder b = HttpRequest.newBuilder(at)
                    .timeout(timeout)
                    .method(method, HttpRequest.BodyPublishers.noBody())
                    .header("Accept", accept);
            if (auth != null && at.getAuthority().equals(uri.getAuthority()) && "https".equals(at.getScheme())) {
                b.header("Authorization", auth);
            }
            HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            int s = r.statusCode();
            if (s != 301 && s != 302 && s != 303 && s != 307 && s != 308) {
                return r;
            }
            discard(r);
            Optional<String> location = r.headers().firstValue("Location");
            if (location.isEmpty() || hop >= MAX_REDIRECTS) {
                throw new ImagePullException("the registry " + uri.getAuthority() + " redirected " + image
                        + (location.isEmpty() ? " nowhere" : " more than " + MAX_REDIRECTS + " times"));
            }
            URI next;
            try {
                next = at.resolve(location.get());
            } catch (IllegalArgumentException e) {
                throw new ImagePullException("the registry " + uri.getAuthority() + " redirected to a bad URL");
            }
            if (!"https".equals(next.getScheme())) {
                throw new ImagePullException(
                        "the registry " + uri.getAuthority() + " redirected " + image + " to plain HTTP: refused");
            }
            at = next;
        }
    }

    /** The registry's refusal, with its error code and message when it sent the distribution spec's JSON. */
    private static ImagePullException failure(HttpResponse<InputStream> r, ImageReference image) throws IOException {
        String detail = "";
        try (InputStream in = r.body()) {
            byte[] body = Bounded.readSome(in, MAX_ERROR_BYTES);
            JsonNode first = JSON.readTree(body).path("errors").path(0);
            if (first.hasNonNull("code")) {
                detail = ": "
                        + UserText.cut(
                                first.path("code").asText() + " "
                                        + first.path("message").asText(""),
                                UserText.LIMIT);
            }
        } catch (IOException | RuntimeException unreadable) {
            // the status says enough
        }
        String what = r.statusCode() == 404 ? " (no such image, tag or blob)" : "";
        return new ImagePullException("the registry " + r.uri().getAuthority() + " answered " + r.statusCode() + what
                + " for " + image + detail);
    }

    private static void discard(HttpResponse<InputStream> r) throws IOException {
        try (InputStream in = r.body()) {
            in.skip(MAX_ERROR_BYTES);
        }
    }

    private static URI uri(String host, ImageReference image, String path) {
        return URI.create("https://" + host + "/v2/" + image.repository() + path);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        http.shutdownNow();
        try {
            http.awaitTermination(Duration.ofSeconds(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
