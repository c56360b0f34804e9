package dev.drover.taskrunner;

import dev.drover.credentials.CredentialException;
import dev.drover.credentials.Credentials;
import dev.drover.credentials.ObjectRef;
import dev.drover.credentials.ServiceAccountToken;
import dev.drover.credentials.TypedSecret;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An API server in miniature for credentials: objects by reference, who may read which (by token), tokens of a
 * chosen life, failures to inject. Tokens are {@code token-N}, so tests see which one a task holds.
 */
final class FakeCredentials implements Credentials {

    final Map<ObjectRef, Map<String, byte[]>> objects = new ConcurrentHashMap<>();
    final List<ObjectRef> forbidden = new ArrayList<>();
    final Deque<CredentialException> tokenFailures = new ConcurrentLinkedDeque<>();
    final Deque<CredentialException> readFailures = new ConcurrentLinkedDeque<>();
    final AtomicInteger minted = new AtomicInteger();
    final AtomicInteger reads = new AtomicInteger();
    final List<String> tokenRequests = new ArrayList<>();
    volatile Duration life = Duration.ofHours(1);
    /** Secrets' types by name (namespace team); Opaque when not given. */
    final Map<String, String> types = new ConcurrentHashMap<>();

    FakeCredentials put(ObjectRef.Kind kind, String name, Map<String, String> data) {
        Map<String, byte[]> bytes = new ConcurrentHashMap<>();
        data.forEach((k, v) -> bytes.put(k, v.getBytes(StandardCharsets.UTF_8)));
        objects.put(new ObjectRef(kind, "team", name), bytes);
        return this;
    }

    @Override
    public synchronized ServiceAccountToken token(
            String namespace, String serviceAccount, String audience, long expirationSeconds)
            throws CredentialException {
        CredentialException failure = tokenFailures.poll();
        if (failure != null) {
            throw failure;
        }
        tokenRequests.add(namespace + "/" + serviceAccount + "/" + audience + "/" + expirationSeconds);
        return new ServiceAccountToken(
                "token-" + minted.incrementAndGet(), Instant.now().plus(life));
    }

    @Override
    public Map<String, byte[]> read(ObjectRef ref, String token) throws CredentialException {
        reads.incrementAndGet();
        CredentialException failure = readFailures.poll();
        if (failure != null) {
            throw failure;
        }
        if (!token.startsWith("token-")) {
            throw new CredentialException(CredentialException.Reason.FORBIDDEN, "not a token");
        }
        if (forbidden.contains(ref)) {
            throw new CredentialException(
                    CredentialException.Reason.FORBIDDEN,
                    "secrets \"" + ref.name() + "\" is forbidden: User \"system:serviceaccount:team:web\" cannot get"
                            + " resource \"secrets\"");
        }
        Map<String, byte[]> data = objects.get(ref);
        if (data == null) {
            throw new CredentialException(CredentialException.Reason.NOT_FOUND, ref + " not found");
        }
        return Map.copyOf(data);
    }

    @Override
    public TypedSecret secret(String namespace, String name, String token) throws CredentialException {
        Map<String, byte[]> data = read(new ObjectRef(ObjectRef.Kind.Secret, namespace, name), token);
        return new TypedSecret(types.get(name), data);
    }
}
