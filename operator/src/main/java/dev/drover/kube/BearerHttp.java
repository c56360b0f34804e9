package dev.drover.kube;

import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.io.InputStream;
import java.net.Authenticator;
import java.net.InetSocketAddress;
import java.net.PasswordAuthentication;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * A {@link HttpClient} to the API server that the agent's client {@link Config} names, which carries no credentials
 * of the agent's: it trusts what the agent's client trusts (the cluster's CA from {@code caCertData} or
 * {@code caCertFile}, else the JDK's CAs; every server only where the config says {@code trustCerts}), goes through
 * the proxy the config names, and has no client certificate, no token and no cookies. Each request brings its own
 * {@code Authorization}.
 */
final class BearerHttp {

    /** A CA file larger than this is no CA bundle. */
    static final int MAX_CA_BYTES = 1 << 20;

    static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private BearerHttp() {}

    /** The API server's base URL, ending in {@code /} so that relative paths keep a prefix it may have. */
    static URI base(Config config) {
        String master = config.getMasterUrl();
        if (master == null || master.isBlank()) {
            throw new IllegalArgumentException("the agent's client configuration names no API server");
        }
        return URI.create(master.endsWith("/") ? master : master + "/");
    }

    static HttpClient build(Config config) {
        URI base = base(config);
        HttpClient.Builder builder = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(
                        positive(config.getConnectionTimeout())
                                ? Duration.ofMillis(config.getConnectionTimeout())
                                : DEFAULT_CONNECT_TIMEOUT)
                .sslContext(tls(config));
        URI proxy = proxy(config, base);
        builder.proxy(
                proxy == null
                        ? HttpClient.Builder.NO_PROXY
                        : ProxySelector.of(InetSocketAddress.createUnresolved(proxy.getHost(), proxyPort(proxy))));
        if (proxy != null && config.getProxyUsername() != null) {
            builder.authenticator(proxyOnly(config.getProxyUsername(), config.getProxyPassword()));
        }
        return builder.build();
    }

    private static boolean positive(Integer millis) {
        return millis != null && millis > 0;
    }

    /** The proxy fabric8 would use for {@code base}: the HTTPS proxy for https, else the HTTP one; none when noProxy matches. */
    static URI proxy(Config config, URI base) {
        String proxy = "https".equalsIgnoreCase(base.getScheme()) && config.getHttpsProxy() != null
                ? config.getHttpsProxy()
                : config.getHttpProxy();
        if (proxy == null || proxy.isBlank() || noProxy(base.getHost(), config.getNoProxy())) {
            return null;
        }
        URI uri = URI.create(proxy.contains("://") ? proxy : "http://" + proxy);
        if (!"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException("the agent's proxy " + uri.getScheme() + "://" + uri.getHost()
                    + " is not an http:// proxy; Secrets and ConfigMaps are read through http:// proxies only");
        }
        return uri;
    }

    private static int proxyPort(URI proxy) {
        return proxy.getPort() < 0 ? 80 : proxy.getPort();
    }

    /** Whether {@code host} is one of {@code noProxy}: {@code *}, the host itself, or a domain it is in. */
    static boolean noProxy(String host, String[] noProxy) {
        if (noProxy == null || host == null) {
            return false;
        }
        String h = host.toLowerCase(Locale.ROOT);
        for (String entry : noProxy) {
            String e = entry.trim().toLowerCase(Locale.ROOT);
            if (e.startsWith("*")) {
                e = e.substring(1);
            }
            if (e.isEmpty()) {
                if (entry.trim().equals("*")) {
                    return true;
                }
                continue;
            }
            String domain = e.startsWith(".") ? e.substring(1) : e;
            if (h.equals(domain) || h.endsWith("." + domain)) {
                return true;
            }
        }
        return false;
    }

    /** Credentials for the proxy only: a server asking for them (401) gets none. */
    private static Authenticator proxyOnly(String user, String password) {
        return new Authenticator() {
            @Override
            protected PasswordAuthentication getPasswordAuthentication() {
                return getRequestorType() == RequestorType.PROXY
                        ? new PasswordAuthentication(user, password == null ? new char[0] : password.toCharArray())
                        : null;
            }
        };
    }

    private static SSLContext tls(Config config) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust(config), null); // no key managers: never a client certificate
            return context;
        } catch (GeneralSecurityException | IOException | PemException e) {
            throw new IllegalArgumentException(
                    "cannot set up TLS to the API server from the agent's client configuration: " + e.getMessage(), e);
        }
    }

    /** Every server where the config says trustCerts, else its CA certificates, else the JDK's CAs. */
    private static TrustManager[] trust(Config config) throws IOException, GeneralSecurityException, PemException {
        if (config.isTrustCerts()) {
            return Trust.managers(null, null, true, null);
        }
        byte[] pem;
        String where;
        if (config.getCaCertData() != null && !config.getCaCertData().isBlank()) {
            pem = Base64.getMimeDecoder().decode(config.getCaCertData());
            where = "caCertData";
        } else if (config.getCaCertFile() != null && !config.getCaCertFile().isBlank()) {
            Path file = Path.of(config.getCaCertFile());
            try (InputStream in = Files.newInputStream(file)) {
                pem = in.readNBytes(MAX_CA_BYTES + 1);
            }
            if (pem.length > MAX_CA_BYTES) {
                throw new IOException("the CA file " + file + " is larger than " + MAX_CA_BYTES + " bytes");
            }
            where = "the CA file " + file;
        } else {
            return Trust.managers(null, null, false, null); // the JDK's CAs, as the agent's own client uses
        }
        if (pem.length > MAX_CA_BYTES) {
            throw new IOException("caCertData is larger than " + MAX_CA_BYTES + " bytes");
        }
        return Trust.managers(pem, where, false, null);
    }
}
