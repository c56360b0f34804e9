package dev.drover.gateway;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayInputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXCertPathValidatorResult;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who the API server says a request is for, as an aggregated API server learns it: the API server connects with its
 * front-proxy client certificate, signed by the request-header CA that {@code kube-system/extension-apiserver-authentication}
 * publishes, and names the user in headers ({@code X-Remote-User}, {@code X-Remote-Uid} from Kubernetes 1.32,
 * {@code X-Remote-Group}, {@code X-Remote-Extra-*} as that ConfigMap says). The headers count only after the certificate is verified against that CA and its common
 * name is one the ConfigMap allows (an empty list allows any); anyone else's headers are never read. The ConfigMap is
 * read again when {@link #REFRESH} has passed, so a rotated CA is taken up without a restart.
 */
public final class RequestHeaderAuth {

    private static final Logger LOG = LoggerFactory.getLogger(RequestHeaderAuth.class);

    public static final String NAMESPACE = "kube-system";
    public static final String CONFIG_MAP = "extension-apiserver-authentication";
    public static final Duration REFRESH = Duration.ofMinutes(1);
    /** Before the ConfigMap was read once: how soon a failed read is tried again. */
    static final Duration RETRY = Duration.ofSeconds(5);

    static final int MAX_GROUPS = 256;
    static final int MAX_EXTRA_KEYS = 64;
    static final int MAX_EXTRA_VALUES = 64;
    /** Longest user name, group, extra key or extra value taken. */
    static final int MAX_VALUE = 1024;
    /** The identity headers of one request together. */
    static final int MAX_TOTAL = 64 << 10;

    /** What the ConfigMap says; {@code cas} empty: no request is authenticated. */
    record Settings(
            List<X509Certificate> cas,
            Set<String> allowedNames,
            List<String> usernameHeaders,
            List<String> uidHeaders,
            List<String> groupHeaders,
            List<String> extraPrefixes) {

        static final Settings NONE = new Settings(List.of(), Set.of(), List.of(), List.of(), List.of(), List.of());

        /** Reads the ConfigMap's data; a malformed or absent CA leaves no CA to trust. */
        static Settings of(Map<String, String> data) {
            List<X509Certificate> cas = new ArrayList<>();
            String pem = data.getOrDefault("requestheader-client-ca-file", "");
            if (!pem.isBlank()) {
                try {
                    for (var c : CertificateFactory.getInstance("X.509")
                            .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                        cas.add((X509Certificate) c);
                    }
                } catch (GeneralSecurityException e) {
                    LOG.warn(
                            "{}/{} holds a requestheader-client-ca-file that cannot be read: {}",
                            NAMESPACE,
                            CONFIG_MAP,
                            e.toString());
                    cas.clear();
                }
            }
            return new Settings(
                    List.copyOf(cas),
                    Set.copyOf(list(data.get("requestheader-allowed-names"))),
                    list(data.get("requestheader-username-headers")),
                    // Kubernetes 1.32+; absent before, and then no uid is named
                    list(data.get("requestheader-uid-headers")),
                    list(data.get("requestheader-group-headers")),
                    list(data.get("requestheader-extra-headers-prefix")).stream()
                            .map(p -> p.toLowerCase(Locale.ROOT))
                            .toList());
        }

        /** The API server writes these lists as JSON arrays of strings. */
        private static List<String> list(String json) {
            if (json == null || json.isBlank()) {
                return List.of();
            }
            try {
                List<String> out = new ArrayList<>();
                for (var n : GatewayStatus.JSON.readTree(json)) {
                    if (n.isTextual() && !n.asText().isBlank()) {
                        out.add(n.asText());
                    }
                }
                return List.copyOf(out);
            } catch (java.io.IOException e) {
                return List.of();
            }
        }
    }

    /** The answer for one request: the user, or why not (an HTTP status and a sentence). */
    sealed interface Result {
        record Authenticated(UserInfo user) implements Result {}

        record Refused(int status, String message) implements Result {}
    }

    private final Supplier<Optional<Settings>> source;
    private final InstantSource clock;
    private volatile Settings settings = Settings.NONE;
    private volatile Instant readAt = Instant.MIN;
    private volatile boolean loaded;

    RequestHeaderAuth(Supplier<Optional<Settings>> source, InstantSource clock) {
        this.source = source;
        this.clock = clock;
    }

    /** Reads the ConfigMap with {@code client} (which needs the Role {@code extension-apiserver-authentication-reader}). */
    public static RequestHeaderAuth from(KubernetesClient client, InstantSource clock) {
        return new RequestHeaderAuth(
                () -> {
                    try {
                        ConfigMap map = client.configMaps()
                                .inNamespace(NAMESPACE)
                                .withName(CONFIG_MAP)
                                .get();
                        if (map == null) {
                            LOG.warn("{}/{} does not exist: no request can be authenticated", NAMESPACE, CONFIG_MAP);
                            return Optional.of(Settings.NONE);
                        }
                        return Optional.of(Settings.of(map.getData() == null ? Map.of() : map.getData()));
                    } catch (KubernetesClientException e) {
                        LOG.warn("cannot read {}/{}: {}", NAMESPACE, CONFIG_MAP, e.getMessage());
                        return Optional.empty();
                    }
                },
                clock);
    }

    /** Whether the ConfigMap has been read once (the gateway is ready then). */
    boolean loaded() {
        refresh();
        return loaded;
    }

    /** The CAs whose client certificates count now, offered to clients in the TLS handshake. */
    List<X509Certificate> authorities() {
        return settings.cas();
    }

    /**
     * Who the request is for: {@code chain} is the client's certificate chain (null or empty: none), {@code headers}
     * the request's headers (names in any case).
     */
    Result authenticate(X509Certificate[] chain, Map<String, List<String>> headers) {
        refresh();
        Settings now = settings;
        if (chain == null || chain.length == 0) {
            return new Result.Refused(
                    401, "no client certificate: this API is served through the Kubernetes API server");
        }
        Optional<String> bad = verify(chain, now);
        if (bad.isPresent()) {
            return new Result.Refused(401, bad.get());
        }
        Map<String, List<String>> lower = new LinkedHashMap<>();
        headers.forEach((k, v) -> lower.computeIfAbsent(k.toLowerCase(Locale.ROOT), x -> new ArrayList<>())
                .addAll(v));
        return identity(lower, now);
    }

    /**
     * Whether {@code chain} is a front proxy's certificate by the CAs and names read last (not read anew: this runs as
     * a TLS handshake ends), so its connection is a known client's from the handshake on.
     */
    boolean verifies(X509Certificate[] chain) {
        return chain.length > 0 && verify(chain, settings).isEmpty();
    }

    private Optional<String> verify(X509Certificate[] chain, Settings now) {
        if (now.cas().isEmpty()) {
            return Optional.of("the gateway knows no request-header CA yet (" + NAMESPACE + "/" + CONFIG_MAP + ")");
        }
        try {
            Set<TrustAnchor> anchors = new HashSet<>();
            for (X509Certificate ca : now.cas()) {
                anchors.add(new TrustAnchor(ca, null));
            }
            PKIXParameters parameters = new PKIXParameters(anchors);
            parameters.setRevocationEnabled(false);
            parameters.setDate(java.util.Date.from(clock.instant()));
            PKIXCertPathValidatorResult valid = (PKIXCertPathValidatorResult) CertPathValidator.getInstance("PKIX")
                    .validate(
                            CertificateFactory.getInstance("X.509").generateCertPath(Arrays.asList(chain)), parameters);
            // as Kubernetes verifies it: every certificate of the chain, up to the CA, must allow client
            // authentication (one that names no usages allows any)
            List<X509Certificate> path = new ArrayList<>(Arrays.asList(chain));
            path.add(valid.getTrustAnchor().getTrustedCert());
            for (X509Certificate c : path) {
                List<String> usages = c.getExtendedKeyUsage();
                if (usages != null && !usages.contains("1.3.6.1.5.5.7.3.2") && !usages.contains("2.5.29.37.0")) {
                    return Optional.of("the client certificate's chain is not for client authentication");
                }
            }
        } catch (GeneralSecurityException e) {
            return Optional.of("the client certificate is not signed by the request-header CA");
        }
        if (!now.allowedNames().isEmpty()) {
            String cn = commonName(chain[0]);
            if (!now.allowedNames().contains(cn)) {
                return Optional.of("the client certificate's common name \"" + GatewayStatus.cut(cn)
                        + "\" is not one of requestheader-allowed-names");
            }
        }
        return Optional.empty();
    }

    /**
     * The subject's common name as Kubernetes (Go's {@code pkix.Name.CommonName}) reads it: of several, the last in
     * the certificate's order. {@link javax.naming.ldap.LdapName#getRdns} lists the RDNs in that order.
     */
    static String commonName(X509Certificate c) {
        String cn = "";
        try {
            for (var rdn :
                    new javax.naming.ldap.LdapName(c.getSubjectX500Principal().getName()).getRdns()) {
                var values = rdn.toAttributes().getAll();
                while (values.hasMore()) {
                    var attribute = values.next();
                    if (attribute.getID().equalsIgnoreCase("CN")) {
                        cn = String.valueOf(attribute.get());
                    }
                }
            }
        } catch (javax.naming.NamingException e) {
            return "";
        }
        return cn;
    }

    private static Result identity(Map<String, List<String>> headers, Settings now) {
        int[] total = {0};
        String user = null;
        for (String h : now.usernameHeaders()) {
            List<String> values = headers.getOrDefault(h.toLowerCase(Locale.ROOT), List.of());
            if (!values.isEmpty() && !values.getFirst().isEmpty()) {
                user = values.getFirst();
                break;
            }
        }
        if (user == null) {
            return new Result.Refused(401, "the API server named no user");
        }
        if (tooLong(user, total)) {
            return new Result.Refused(400, "the user name is longer than " + MAX_VALUE + " characters");
        }
        String uid = null;
        for (String h : now.uidHeaders()) {
            List<String> values = headers.getOrDefault(h.toLowerCase(Locale.ROOT), List.of());
            if (!values.isEmpty() && !values.getFirst().isEmpty()) {
                uid = values.getFirst();
                break;
            }
        }
        if (uid != null && tooLong(uid, total)) {
            return new Result.Refused(400, "the user's uid is longer than " + MAX_VALUE + " characters");
        }
        List<String> groups = new ArrayList<>();
        for (String h : now.groupHeaders()) {
            for (String g : headers.getOrDefault(h.toLowerCase(Locale.ROOT), List.of())) {
                if (groups.size() >= MAX_GROUPS || tooLong(g, total)) {
                    return new Result.Refused(
                            400, "more than " + MAX_GROUPS + " groups, or a group longer than " + MAX_VALUE);
                }
                groups.add(g);
            }
        }
        Map<String, List<String>> extra = new LinkedHashMap<>();
        for (String prefix : now.extraPrefixes()) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (!e.getKey().startsWith(prefix) || e.getKey().length() == prefix.length()) {
                    continue;
                }
                // the header name is lowercased already, and only then decoded, as Kubernetes does: an escaped
                // upper-case letter stays upper-case
                String key = decode(e.getKey().substring(prefix.length()));
                if (tooLong(key, total) || (!extra.containsKey(key) && extra.size() >= MAX_EXTRA_KEYS)) {
                    return new Result.Refused(400, "more than " + MAX_EXTRA_KEYS + " extra keys, or one too long");
                }
                List<String> values = extra.computeIfAbsent(key, k -> new ArrayList<>());
                for (String v : e.getValue()) {
                    if (values.size() >= MAX_EXTRA_VALUES || tooLong(v, total)) {
                        return new Result.Refused(
                                400, "more than " + MAX_EXTRA_VALUES + " values for an extra key, or one too long");
                    }
                    values.add(v);
                }
            }
        }
        UserInfo info = new UserInfo();
        info.setUsername(user);
        info.setUid(uid);
        info.setGroups(groups);
        info.setExtra(extra);
        return new Result.Authenticated(info);
    }

    /** Counts {@code s} into the request's total; whether it or the total is past its bound. */
    private static boolean tooLong(String s, int[] total) {
        total[0] += s.length();
        return s.length() > MAX_VALUE || total[0] > MAX_TOTAL;
    }

    /** Percent-decodes an extra key as the API server encodes it; a malformed escape stays as written. */
    static String decode(String raw) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        try {
            return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return raw;
        }
    }

    private boolean fresh(Instant now) {
        return readAt != Instant.MIN && now.isBefore(readAt.plus(loaded ? REFRESH : RETRY));
    }

    private void refresh() {
        Instant now = clock.instant();
        if (fresh(now)) {
            return;
        }
        synchronized (this) {
            if (fresh(now)) {
                return;
            }
            Optional<Settings> read = source.get();
            // a failed read keeps what was known, and is tried again at the next refresh
            readAt = now;
            if (read.isPresent()) {
                settings = read.get();
                loaded = true;
            }
        }
    }
}
