package dev.drover.httpapi;

import dev.drover.api.v1alpha1.Allocation;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A mock API server that answers TokenReviews and SubjectAccessReviews as kube-apiserver does: it knows
 * {@code alice-token} for user alice and {@code bob-token} for user bob (both of group devs), tokens with audience
 * {@code drover.dev/agent}; {@code alice-api-token}, alice's token for the API server (audience
 * {@code https://kubernetes.default.svc}); {@code node-b-token}, a ServiceAccount token with the agent's audience
 * bound to a pod on node {@code node-b}; {@code gateway-token}, the gateway's ({@link #GATEWAY}, its pod on node
 * {@code node-g}). A review that names audiences the token was not made for is refused with
 * the API server's error. {@code sloppy-token} is answered as a server that ignores audiences would (authenticated,
 * no {@code status.audiences}). RBAC lets alice, bob, the node-b account and the gateway read in namespace
 * {@code team-a} only; {@code carol-token}'s user carol (audience {@code drover.dev/agent}) may do anything in
 * namespace {@code team-b} only. It counts the TokenReviews it is asked.
 */
final class ReviewingApiServer implements AutoCloseable {

    static final String NODE_B_ACCOUNT = "system:serviceaccount:drover-system:drover-agent";
    static final String GATEWAY = "system:serviceaccount:drover-system:drover-gateway";

    final KubernetesMockServer server = new KubernetesMockServer(false);
    final List<SubjectAccessReview> asked = new CopyOnWriteArrayList<>();
    final List<TokenReview> reviewed = new CopyOnWriteArrayList<>();
    final AtomicInteger tokenReviews = new AtomicInteger();
    final KubernetesClient client;

    ReviewingApiServer() {
        server.init(InetAddress.getLoopbackAddress(), 0);
        server.expect()
                .post()
                .withPath("/apis/authentication.k8s.io/v1/tokenreviews")
                .andReply(200, request -> {
                    tokenReviews.incrementAndGet();
                    TokenReview review =
                            Serialization.unmarshal(request.getBody().readUtf8(), TokenReview.class);
                    reviewed.add(review);
                    String token = review.getSpec().getToken();
                    String user = switch (token) {
                        case "alice-token", "alice-api-token", "sloppy-token" -> "alice";
                        case "bob-token" -> "bob";
                        case "carol-token" -> "carol";
                        case "node-b-token" -> NODE_B_ACCOUNT;
                        case "gateway-token" -> GATEWAY;
                        default -> null;
                    };
                    List<String> made = token.equals("alice-api-token")
                            ? List.of("https://kubernetes.default.svc")
                            : List.of("drover.dev/agent");
                    List<String> wanted = review.getSpec().getAudiences() == null
                                    || review.getSpec().getAudiences().isEmpty()
                            ? made
                            : review.getSpec().getAudiences();
                    List<String> matched =
                            made.stream().filter(wanted::contains).toList();
                    boolean known = user != null && !matched.isEmpty();
                    return new TokenReviewBuilder(review)
                            .withNewStatus()
                            .withAuthenticated(known)
                            .withAudiences(known && !token.equals("sloppy-token") ? matched : null)
                            .withError(
                                    user == null
                                            ? "invalid bearer token"
                                            : known
                                                    ? null
                                                    : "token audiences " + made + " is invalid for the"
                                                            + " target audiences " + wanted)
                            .withNewUser()
                            .withUsername(known ? user : null)
                            .withGroups(known ? List.of("devs") : null)
                            .withExtra(
                                    known && token.equals("node-b-token")
                                            ? Map.of("authentication.kubernetes.io/node-name", List.of("node-b"))
                                            : known && token.equals("gateway-token")
                                                    ? Map.of(
                                                            "authentication.kubernetes.io/node-name", List.of("node-g"))
                                                    : null)
                            .endUser()
                            .endStatus()
                            .build();
                })
                .always();
        server.expect()
                .post()
                .withPath("/apis/authorization.k8s.io/v1/subjectaccessreviews")
                .andReply(200, request -> {
                    SubjectAccessReview review =
                            Serialization.unmarshal(request.getBody().readUtf8(), SubjectAccessReview.class);
                    asked.add(review);
                    String namespace = review.getSpec().getResourceAttributes().getNamespace();
                    boolean allowed = List.of("alice", "bob", NODE_B_ACCOUNT, GATEWAY)
                                            .contains(review.getSpec().getUser())
                                    && namespace.equals("team-a")
                                    // bob reads (get) but may not act (create, as for allocations/signal)
                                    && (review.getSpec()
                                                    .getResourceAttributes()
                                                    .getVerb()
                                                    .equals("get")
                                            || !review.getSpec().getUser().equals("bob"))
                            || review.getSpec().getUser().equals("carol") && namespace.equals("team-b");
                    return new SubjectAccessReviewBuilder(review)
                            .withNewStatus()
                            .withAllowed(allowed)
                            .withReason(allowed ? "RBAC: allowed by RoleBinding readers" : "")
                            .endStatus()
                            .build();
                })
                .always();
        client = server.createClient(new JdkHttpClientFactory());
    }

    /** Serves {@code a} at its path, as the API server would to a GET. */
    void serve(Allocation a) {
        server.expect()
                .get()
                .withPath("/apis/drover.dev/v1alpha1/namespaces/"
                        + a.getMetadata().getNamespace() + "/allocations/"
                        + a.getMetadata().getName())
                .andReturn(200, a)
                .always();
    }

    /** Serves {@code n} at its path, as the API server would to a GET. */
    void serve(Node n) {
        server.expect()
                .get()
                .withPath("/api/v1/nodes/" + n.getMetadata().getName())
                .andReturn(200, n)
                .always();
    }

    int requestCount() {
        return server.getRequestCount();
    }

    @Override
    public void close() {
        client.close();
        server.destroy();
    }
}
