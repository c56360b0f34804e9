package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.web.ClientSocket;
import dev.drover.web.Exchange;
import dev.drover.web.MessageSocket;
import dev.drover.web.Relay;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.websocket.core.FrameHandler;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeRequest;
import org.eclipse.jetty.websocket.core.server.ServerUpgradeResponse;

/**
 * API aggregation as kube-aggregator does it: an {@code apiregistration.k8s.io/v1} APIService with a {@code service}
 * takes every request under {@code /apis/GROUP/VERSION}. The server has already authenticated and authorized the
 * caller; it drops the caller's credentials and any {@code X-Remote-*} or {@code Impersonate-*} headers the caller
 * sent, and calls the backend over TLS with its front-proxy client certificate ({@link FrontProxy}) and the caller's
 * identity in {@code X-Remote-User}, {@code X-Remote-Group} (one per group) and {@code X-Remote-Extra-KEY} (the key
 * percent-encoded). Responses stream through as they come (a log follow, a watch). The backend's certificate is
 * checked against {@code spec.caBundle} (or not, with {@code insecureSkipTLSVerify}).
 *
 * <p>On the local cluster a service is reached at its Service's {@code spec.clusterIP} (set it to {@code
 * 127.0.0.1}) and the APIService's {@code spec.service.port} (default 443), or that Service port's numeric {@code
 * targetPort} when it has one (where a process on this machine serves: there is no kube-proxy). As a real aggregator
 * does, the backend certificate must name {@code NAME.NAMESPACE.svc}, whatever address was dialled. A WebSocket
 * upgrade (an exec) is proxied at message level ({@link #upgrade}): the backend's upgrade is opened first, with the
 * same identity headers, and the caller's is accepted only then, so the backend's refusal is the caller's answer.
 */
final class Aggregator {

    static final ResourceType API_SERVICES =
            ResourceType.builtIn("apiregistration.k8s.io", "v1", "apiservices", "APIService", false);

    private static final List<String> FORWARDED = List.of("Accept", "Content-Type", "User-Agent");

    private final ObjectStore store;
    private final FrontProxy frontProxy;
    private final Map<String, HttpClient> clients = new ConcurrentHashMap<>();

    Aggregator(ObjectStore store, FrontProxy frontProxy) {
        this.store = store;
        this.frontProxy = frontProxy;
    }

    /** The APIService serving {@code /apis/GROUP/VERSION...}, or null when the server serves the path itself. */
    ObjectNode serviceFor(String path) {
        String[] s = path.split("/");
        if (s.length < 4 || !s[1].equals("apis")) {
            return null;
        }
        try {
            ObjectNode service = store.get(API_SERVICES, null, s[3] + "." + s[2]);
            return service.path("spec").path("service").isObject() ? service : null;
        } catch (ApiFront.ApiError none) {
            return null;
        }
    }

    /** Every aggregated group and version, for {@code /apis}. Caller headers other than {@link #FORWARDED} never reach a backend. */
    List<String[]> groupVersions() {
        List<String[]> out = new ArrayList<>();
        for (ObjectNode s : store.list(API_SERVICES, null).items()) {
            if (s.path("spec").path("service").isObject()) {
                out.add(new String[] {
                    s.path("spec").path("group").asText(),
                    s.path("spec").path("version").asText()
                });
            }
        }
        return out;
    }

    /**
     * Opens the backend's WebSocket for an upgrade of an aggregated path, as the caller asked it (path, query,
     * subprotocols) with the caller's identity; answers the caller's upgrade with the backend's refusal, or accepts it
     * and relays every message both ways ({@link Relay}).
     */
    FrameHandler upgrade(
            ServerUpgradeRequest request,
            ServerUpgradeResponse response,
            Callback callback,
            ObjectNode apiService,
            UserInfo user) {
        JsonNode spec = apiService.path("spec");
        URI base = backend(spec);
        String query = request.getHttpURI().getQuery();
        URI target = URI.create("wss://" + base.getRawAuthority()
                + request.getHttpURI().getPath() + (query == null ? "" : "?" + query));
        Map<String, List<String>> headers = new java.util.LinkedHashMap<>();
        headers.put("X-Remote-User", List.of(user.username()));
        if (!user.groups().isEmpty()) {
            headers.put("X-Remote-Group", user.groups());
        }
        user.extra()
                .forEach((k, values) ->
                        headers.put("X-Remote-Extra-" + URLEncoder.encode(k, StandardCharsets.UTF_8), values));
        Relay relay = new Relay();
        ClientSocket backendSocket;
        try {
            backendSocket = ClientSocket.openRepeating(
                    client(spec),
                    target,
                    headers,
                    request.getSubProtocols(),
                    relay.fromAgent(),
                    Duration.ofSeconds(10));
        } catch (ClientSocket.Refused r) {
            AggregatedUpgrades.refuse(response, callback, r.status(), r.body());
            return null;
        } catch (IOException e) {
            throw unavailable(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiFront.ApiError(503, "ServiceUnavailable", "server is shutting down");
        }
        relay.expectUser(java.time.Duration.ofSeconds(30), () -> {}); // the local API server holds no permits
        response.setAcceptedSubProtocol(backendSocket.protocol());
        return new MessageSocket(relay.fromUser());
    }

    void proxy(Exchange ex, ObjectNode apiService, UserInfo user, byte[] body)
            throws IOException, InterruptedException {
        if (ex.header("Upgrade") != null) {
            throw new ApiFront.ApiError(
                    501, "NotImplemented", "the local API server proxies only WebSocket upgrades to aggregated APIs");
        }
        JsonNode spec = apiService.path("spec");
        URI target = backend(spec).resolve(ex.rawPath() + (ex.rawQuery() == null ? "" : "?" + ex.rawQuery()));
        HttpRequest.Builder request = HttpRequest.newBuilder(target)
                .method(
                        ex.method(),
                        body.length == 0
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(body));
        for (String h : FORWARDED) {
            String v = ex.header(h);
            if (v != null) {
                request.header(h, v);
            }
        }
        request.header("X-Remote-User", user.username());
        user.groups().forEach(g -> request.header("X-Remote-Group", g));
        user.extra()
                .forEach((k, values) -> values.forEach(
                        v -> request.header("X-Remote-Extra-" + URLEncoder.encode(k, StandardCharsets.UTF_8), v)));
        HttpResponse<InputStream> response;
        try {
            response = client(spec).send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (javax.net.ssl.SSLHandshakeException e) {
            throw unavailable(new IOException(
                    "the backend's certificate is not trusted for " + serverName(spec) + ": " + e.getMessage()));
        } catch (IOException e) {
            throw unavailable(e);
        }
        try (InputStream in = response.body()) {
            // chunked: passed on as it comes
            OutputStream out = ex.stream(
                    response.statusCode(),
                    response.headers().firstValue("Content-Type").orElse(null));
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, n);
                out.flush();
            }
            out.close();
        }
    }

    private URI backend(JsonNode spec) {
        JsonNode ref = spec.path("service");
        String namespace = ref.path("namespace").asText("");
        String name = ref.path("name").asText("");
        try {
            ObjectNode service = store.get(Catalog.SERVICES, namespace, name);
            String ip = service.path("spec").path("clusterIP").asText("");
            if (ip.isEmpty() || ip.equals("None") || ip.contains("/") || ip.contains("@")) {
                throw unavailable(new IOException("service " + namespace + "/" + name + " has no clusterIP"));
            }
            int port = ref.path("port").asInt(443);
            for (JsonNode p : service.path("spec").path("ports")) {
                if (p.path("port").asInt() == port && p.path("targetPort").isInt()) {
                    port = p.path("targetPort").asInt();
                }
            }
            return URI.create("https://" + ip + ":" + port);
        } catch (ApiFront.ApiError missing) {
            if (missing.code == 503) {
                throw missing;
            }
            throw unavailable(new IOException("service " + namespace + "/" + name + " not found"));
        }
    }

    private HttpClient client(JsonNode spec) {
        String key = spec.path("insecureSkipTLSVerify").asBoolean() + "|" + serverName(spec) + "|"
                + spec.path("caBundle").asText("");
        return clients.computeIfAbsent(key, k -> {
            try {
                SSLContext tls = SSLContext.getInstance("TLS");
                tls.init(frontProxy.keyManagers(), trust(spec), null);
                return HttpClient.newBuilder()
                        .sslContext(tls)
                        .connectTimeout(Duration.ofSeconds(5))
                        .build();
            } catch (GeneralSecurityException | IOException e) {
                throw new ApiFront.ApiError(
                        503, "ServiceUnavailable", "cannot set up TLS to the aggregated API: " + e.getMessage());
            }
        });
    }

    private static TrustManager[] trust(JsonNode spec) throws GeneralSecurityException, IOException {
        if (spec.path("insecureSkipTLSVerify").asBoolean()) {
            return new TrustManager[] {
                new X509TrustManager() {
                    @Override
                    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

                    @Override
                    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

                    @Override
                    public X509Certificate[] getAcceptedIssuers() {
                        return new X509Certificate[0];
                    }
                }
            };
        }
        String bundle = spec.path("caBundle").asText("");
        TrustManager[] anchors = TrustAnchors.of(
                bundle.isEmpty()
                        ? List.of()
                        : CertificateFactory.getInstance("X.509")
                                .generateCertificates(new ByteArrayInputStream(
                                        Base64.getDecoder().decode(bundle))));
        return new TrustManager[] {new ServiceNameTrust((X509TrustManager) anchors[0], serverName(spec))};
    }

    /** The name the backend's certificate must carry: {@code NAME.NAMESPACE.svc} of the APIService's Service. */
    static String serverName(JsonNode spec) {
        JsonNode ref = spec.path("service");
        return ref.path("name").asText("") + "." + ref.path("namespace").asText("") + ".svc";
    }

    /**
     * A chain leading to the caBundle, for a certificate whose DNS names include the Service's name: the address
     * dialled (127.0.0.1 on this machine) is not what is checked. Being an extended trust manager, it is asked
     * instead of the JDK's own host name check.
     */
    private static final class ServiceNameTrust extends javax.net.ssl.X509ExtendedTrustManager {
        private final X509TrustManager chains;
        private final String name;

        ServiceNameTrust(X509TrustManager chains, String name) {
            this.chains = chains;
            this.name = name;
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType)
                throws java.security.cert.CertificateException {
            chains.checkServerTrusted(chain, authType);
            java.util.Collection<List<?>> names = chain[0].getSubjectAlternativeNames();
            if (names != null) {
                for (List<?> n : names) {
                    if (Integer.valueOf(2).equals(n.get(0)) && name.equalsIgnoreCase(String.valueOf(n.get(1)))) {
                        return;
                    }
                }
            }
            throw new java.security.cert.CertificateException("the certificate does not name " + name);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, java.net.Socket socket)
                throws java.security.cert.CertificateException {
            checkServerTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine)
                throws java.security.cert.CertificateException {
            checkServerTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType)
                throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("the aggregator is no TLS server");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, java.net.Socket socket)
                throws java.security.cert.CertificateException {
            checkClientTrusted(chain, authType);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine)
                throws java.security.cert.CertificateException {
            checkClientTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return chains.getAcceptedIssuers();
        }
    }

    private static ApiFront.ApiError unavailable(IOException cause) {
        return new ApiFront.ApiError(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request: " + cause.getMessage());
    }
}
