package dev.drover.image;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.httpapi.TestCa;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.Signature;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x509.KeyPurposeId;

/**
 * A registry token service as Docker Hub runs one, for tests: it hands out JWTs the registry checks against the CA
 * in {@link #rootBundle}, anonymous ones for pulling repositories under {@code public/}, and to {@link
 * TestRegistry#USER} with the right password, pull and push anywhere. Served over TLS from the same CA as the
 * registry.
 */
final class TestTokenService implements AutoCloseable {

    static final String SERVICE = "drover-test-registry";
    static final String ISSUER = "drover-test-issuer";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpsServer server;
    private final TestCa.Leaf signer;
    private final Path rootBundle;
    final AtomicInteger issued = new AtomicInteger();

    TestTokenService(Path dir, TestCa serverCa, SSLContext serverTls) throws Exception {
        TestCa tokenCa = new TestCa("drover-test-token-ca");
        this.signer = tokenCa.sign("drover-test-token-signer", KeyPurposeId.anyExtendedKeyUsage);
        this.rootBundle = tokenCa.writePem(dir.resolve("token-ca.pem"));
        server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(serverTls));
        server.createContext("/token", ex -> {
            Map<String, String> query = query(ex.getRequestURI().getRawQuery());
            String scope = query.getOrDefault("scope", "");
            String authorization = ex.getRequestHeaders().getFirst("Authorization");
            boolean user = new RegistryCredentials(TestRegistry.USER, TestRegistry.PASSWORD)
                    .basic()
                    .equals(authorization);
            String[] parts = scope.split(":");
            boolean anonymousPull = parts.length == 3 && parts[1].startsWith("public/") && parts[2].equals("pull");
            byte[] body;
            int status;
            if (authorization != null && !user) {
                status = 401;
                body = "{\"details\":\"wrong credentials\"}".getBytes(StandardCharsets.UTF_8);
            } else if (!user && !anonymousPull) {
                status = 401;
                body = "{\"details\":\"credentials needed\"}".getBytes(StandardCharsets.UTF_8);
            } else {
                status = 200;
                List<String> actions = user ? List.of("pull", "push") : List.of("pull");
                body = JSON.writeValueAsBytes(
                        Map.of("token", jwt(parts.length == 3 ? parts[1] : "", actions), "expires_in", 300));
                issued.incrementAndGet();
            }
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(status, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
    }

    /** The realm the registry sends clients to. */
    String realm() {
        return "https://127.0.0.1:" + server.getAddress().getPort() + "/token";
    }

    Path rootBundle() {
        return rootBundle;
    }

    /** A token for {@link TestRegistry#USER}'s pushes to {@code repository}. */
    String pushToken(String repository) throws IOException {
        return jwt(repository, List.of("pull", "push"));
    }

    private String jwt(String repository, List<String> actions) throws IOException {
        try {
            Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
            ObjectNode header = JSON.createObjectNode().put("typ", "JWT").put("alg", "ES256");
            header.putArray("x5c")
                    .add(Base64.getEncoder().encodeToString(signer.certificate().getEncoded()));
            long now = Instant.now().getEpochSecond();
            ObjectNode claims = JSON.createObjectNode()
                    .put("iss", ISSUER)
                    .put("sub", "test")
                    .put("aud", SERVICE)
                    .put("exp", now + 300)
                    .put("nbf", now - 10)
                    .put("iat", now)
                    .put("jti", UUID.randomUUID().toString());
            ObjectNode access = claims.putArray("access").addObject();
            access.put("type", "repository").put("name", repository);
            actions.forEach(access.putArray("actions")::add);
            String signed = url.encodeToString(JSON.writeValueAsBytes(header)) + "."
                    + url.encodeToString(JSON.writeValueAsBytes(claims));
            Signature s = Signature.getInstance("SHA256withECDSAinP1363Format");
            s.initSign(signer.key());
            s.update(signed.getBytes(StandardCharsets.US_ASCII));
            return signed + "." + url.encodeToString(s.sign());
        } catch (java.security.GeneralSecurityException e) {
            throw new IOException(e);
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    out.put(
                            URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        return out;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
