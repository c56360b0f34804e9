package dev.drover.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.drover.local.LocalApiServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

/**
 * Watches the allocations and notes when each is first {@code Running}, and when each is gone (its {@code DELETED}
 * event: deleted and its finalizer removed), reading only the type, the name and the client status out of each event
 * as it streams by.
 */
final class RunningWatch implements AutoCloseable {

    private static final JsonFactory JSON = new JsonFactory();

    private final Thread thread;
    private final InputStream stream;
    private volatile boolean closed;

    RunningWatch(javax.net.ssl.SSLContext tls, URI server, Map<String, Long> running, Map<String, Long> gone)
            throws IOException, InterruptedException {
        HttpClient client = HttpClient.newBuilder().sslContext(tls).build();
        HttpResponse<InputStream> r = client.send(
                HttpRequest.newBuilder(
                                server.resolve("/apis/drover.dev/v1alpha1/namespaces/default/allocations?watch=true"))
                        .header("Authorization", "Bearer " + LocalApiServer.ADMIN_TOKEN)
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        if (r.statusCode() != 200) {
            client.close();
            throw new IOException("watching allocations: HTTP " + r.statusCode());
        }
        stream = r.body();
        thread = Thread.ofPlatform().name("bench-watch").start(() -> {
            try (client;
                    var parser = JSON.createParser(stream)) {
                while (parser.nextToken() != null) { // one {"type": ..., "object": {...}} after another
                    String[] nameStatusType = new String[3];
                    readEvent(parser, nameStatusType);
                    String name = nameStatusType[0];
                    if (name != null && "DELETED".equals(nameStatusType[2])) {
                        gone.putIfAbsent(name, System.nanoTime());
                    } else if (name != null && "Running".equals(nameStatusType[1])) {
                        running.putIfAbsent(name, System.nanoTime());
                    }
                }
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("bench: the watch ended: " + e);
                }
            }
        });
    }

    /**
     * Reads one event object (the parser is on its START_OBJECT): object.metadata.name, object.status.clientStatus,
     * type.
     */
    private static void readEvent(JsonParser p, String[] out) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            p.nextToken();
            if (field.equals("type") && p.currentToken().isScalarValue()) {
                out[2] = p.getText();
            } else if (field.equals("object") && p.currentToken() == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String part = p.currentName();
                    p.nextToken();
                    if ((part.equals("metadata") || part.equals("status"))
                            && p.currentToken() == JsonToken.START_OBJECT) {
                        String wanted = part.equals("metadata") ? "name" : "clientStatus";
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String key = p.currentName();
                            p.nextToken();
                            if (key.equals(wanted) && p.currentToken().isScalarValue()) {
                                out[part.equals("metadata") ? 0 : 1] = p.getText();
                            } else {
                                p.skipChildren();
                            }
                        }
                    } else {
                        p.skipChildren();
                    }
                }
            } else {
                p.skipChildren();
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        try {
            stream.close();
        } catch (IOException e) {
            // closing anyway
        }
        thread.join(5_000);
    }
}
