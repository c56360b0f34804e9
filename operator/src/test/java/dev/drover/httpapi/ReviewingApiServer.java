package dev.drover.httpapi;

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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A mock API server that answers TokenReviews and SubjectAccessReviews: it knows two tokens, {@code alice-token}
 * for user alice and {@code bob-token} for user bob (both of group devs), and RBAC lets them read in namespace
 * {@code team-a} only. It counts the TokenReviews it is asked.
 */
final class ReviewingApiServer implements AutoCloseable {

    final KubernetesMockServer server = new KubernetesMockServer(false);
    final List<SubjectAccessReview> asked = new CopyOnWriteArrayList<>();
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
                    String user = switch (review.getSpec().getToken()) {
                        case "alice-token" -> "alice";
                        case "bob-token" -> "bob";
                        default -> null;
                    };
                    boolean known = user != null;
                    return new TokenReviewBuilder(review)
                            .withNewStatus()
                            .withAuthenticated(known)
                            .withError(known ? null : "invalid bearer token")
                            .withNewUser()
                            .withUsername(user)
                            .withGroups(known ? List.of("devs") : null)
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
                    boolean allowed =
                            List.of("alice", "bob").contains(review.getSpec().getUser())
                                    && review.getSpec()
                                            .getResourceAttributes()
                                            .getNamespace()
                                            .equals("team-a");
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

    int requestCount() {
        return server.getRequestCount();
    }

    @Override
    public void close() {
        client.close();
        server.destroy();
    }
}
