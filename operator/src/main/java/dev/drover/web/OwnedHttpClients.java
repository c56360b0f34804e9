package dev.drover.web;

import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.InetAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * fabric8's JDK HTTP client factory, remembering the JDK clients it builds so that {@link #shutdown} can end them.
 * Closing a fabric8 client only stops its executor: the JDK client's selector thread lives on, blocked in native
 * code, until the client is collected, and a JVM that exits meanwhile waits up to 300 ms for it (HotSpot's exit
 * waits for threads in native), a fifth of a short {@code kubectl drover} call; in the agent it would outlive the
 * client that used it.
 */
public final class OwnedHttpClients extends JdkHttpClientFactory {

    private static final Duration THREADS_GONE = Duration.ofSeconds(1);

    private final List<HttpClient> built = new CopyOnWriteArrayList<>();

    @Override
    protected HttpClient.Builder createNewHttpClientBuilder() {
        return new Recording(super.createNewHttpClientBuilder(), built);
    }

    /** Shuts down every JDK client built, ending their threads (waits at most a second for them). */
    public void shutdown() {
        built.forEach(HttpClient::shutdownNow);
        try {
            for (HttpClient client : built) {
                client.awaitTermination(THREADS_GONE);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        built.clear();
    }

    /** A builder that passes everything to the JDK's and records what it builds. */
    private record Recording(HttpClient.Builder delegate, List<HttpClient> built) implements HttpClient.Builder {

        @Override
        public HttpClient.Builder cookieHandler(CookieHandler cookieHandler) {
            delegate.cookieHandler(cookieHandler);
            return this;
        }

        @Override
        public HttpClient.Builder connectTimeout(Duration duration) {
            delegate.connectTimeout(duration);
            return this;
        }

        @Override
        public HttpClient.Builder sslContext(SSLContext sslContext) {
            delegate.sslContext(sslContext);
            return this;
        }

        @Override
        public HttpClient.Builder sslParameters(SSLParameters sslParameters) {
            delegate.sslParameters(sslParameters);
            return this;
        }

        @Override
        public HttpClient.Builder executor(Executor executor) {
            delegate.executor(executor);
            return this;
        }

        @Override
        public HttpClient.Builder followRedirects(HttpClient.Redirect policy) {
            delegate.followRedirects(policy);
            return this;
        }

        @Override
        public HttpClient.Builder version(HttpClient.Version version) {
            delegate.version(version);
            return this;
        }

        @Override
        public HttpClient.Builder priority(int priority) {
            delegate.priority(priority);
            return this;
        }

        @Override
        public HttpClient.Builder proxy(ProxySelector proxySelector) {
            delegate.proxy(proxySelector);
            return this;
        }

        @Override
        public HttpClient.Builder authenticator(Authenticator authenticator) {
            delegate.authenticator(authenticator);
            return this;
        }

        @Override
        public HttpClient.Builder localAddress(InetAddress localAddr) {
            delegate.localAddress(localAddr);
            return this;
        }

        @Override
        public HttpClient build() {
            HttpClient client = delegate.build();
            built.add(client);
            return client;
        }
    }
}
