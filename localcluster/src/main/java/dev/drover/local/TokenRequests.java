package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * The TokenRequest API, {@code POST /api/v1/namespaces/NS/serviceaccounts/NAME/token}, as Kubernetes 1.32 answers
 * it: {@code spec.audiences} (default: the API server's), {@code spec.expirationSeconds} (default 3600; under 10
 * minutes or over 2^32 seconds is invalid; more than {@link #MAX_LIFETIME} is cut to it, as a server with
 * {@code --service-account-max-token-expiration} cuts it) and {@code spec.boundObjectRef} to a Pod, Secret or Node
 * that must exist (with the uid given, if one is), the ServiceAccount a pod runs as being the token's. A token bound
 * to a pod also names the pod's node.
 *
 * <p>In the order of kube-apiserver's {@code TokenREST.Create} ({@code pkg/registry/core/serviceaccount/storage/
 * token.go}): the ServiceAccount must exist, the request is defaulted (audiences, name, namespace, creation time)
 * and validated, then validating admission sees it as the TokenRequest it now is (kind {@code authentication.k8s.io/v1
 * TokenRequest}, resource {@code serviceaccounts}, subresource {@code token}, operation CREATE, the ServiceAccount's
 * name, its expiration as asked: not yet cut), and only then is the bound object looked up and the token signed.
 */
final class TokenRequests {

    /** The kind admission sees for a token request (its resource is serviceaccounts, subresource token). */
    static final String GROUP = "authentication.k8s.io";

    static final String VERSION = "v1";
    static final String KIND = "TokenRequest";

    /** The longest life a token gets here. */
    static final Duration MAX_LIFETIME = Duration.ofHours(48);

    private static final long MIN_SECONDS = 600;
    private static final long MAX_SECONDS = 1L << 32;

    private final ObjectStore store;
    private final ServiceAccountTokens tokens;
    private final Clock clock;

    TokenRequests(ObjectStore store, ServiceAccountTokens tokens, Clock clock) {
        this.store = store;
        this.tokens = tokens;
        this.clock = clock;
    }

    /** Answers a token request by {@code user}: the TokenRequest with its token in the status. */
    ObjectNode answer(
            ObjectNode request, String namespace, String serviceAccountName, UserInfo user, Admission admission) {
        ObjectNode sa = store.get(Catalog.SERVICE_ACCOUNTS, namespace, serviceAccountName);
        ObjectNode prepared = prepared(request, namespace, serviceAccountName);
        admission.admit(new Admission.Request(
                Admission.Operation.CREATE,
                Catalog.SERVICE_ACCOUNTS,
                "token",
                namespace,
                serviceAccountName,
                prepared.deepCopy(),
                null,
                user,
                false));
        return minted(prepared, sa, namespace, serviceAccountName);
    }

    /** The request defaulted and validated: what admission sees. */
    private ObjectNode prepared(ObjectNode request, String namespace, String serviceAccountName) {
        ObjectNode out = request.deepCopy();
        out.put("apiVersion", GROUP + "/" + VERSION).put("kind", KIND);
        ObjectNode meta = out.withObject("metadata");
        mustMatch(meta, "name", serviceAccountName, "service account name", serviceAccountName);
        mustMatch(meta, "namespace", namespace, "service account namespace", serviceAccountName);
        meta.put("name", serviceAccountName).put("namespace", namespace);
        meta.put(
                "creationTimestamp",
                clock.instant().truncatedTo(ChronoUnit.SECONDS).toString());
        out.remove("status");
        ObjectNode spec = out.withObject("spec");
        List<String> audiences = new ArrayList<>();
        spec.path("audiences").forEach(a -> audiences.add(a.asText()));
        if (audiences.isEmpty()) {
            audiences.addAll(ServiceAccountTokens.API_AUDIENCES);
        }
        ArrayNode aud = spec.putArray("audiences");
        audiences.forEach(aud::add);
        JsonNode requested = spec.path("expirationSeconds");
        long seconds = requested.isMissingNode() || requested.isNull() ? 3600 : requested.asLong();
        if (!requested.isMissingNode() && !requested.isNull() && !requested.canConvertToLong()) {
            throw invalid(requested.toString(), "must be an integer number of seconds");
        }
        if (seconds < MIN_SECONDS) {
            throw invalid(Long.toString(seconds), "may not specify a duration less than 10 minutes");
        }
        if (seconds > MAX_SECONDS) {
            throw invalid(Long.toString(seconds), "may not specify a duration larger than 2^32 seconds");
        }
        spec.put("expirationSeconds", seconds);
        return out;
    }

    /** Looks up the bound object and signs the token: the answer. */
    private ObjectNode minted(ObjectNode out, ObjectNode sa, String namespace, String serviceAccountName) {
        ObjectNode spec = out.withObject("spec");
        List<String> audiences = new ArrayList<>();
        spec.path("audiences").forEach(a -> audiences.add(a.asText()));
        long seconds = Math.min(spec.path("expirationSeconds").asLong(), MAX_LIFETIME.toSeconds());
        spec.put("expirationSeconds", seconds);
        String boundKind = null;
        ServiceAccountTokens.Ref bound = null;
        ServiceAccountTokens.Ref node = null;
        JsonNode ref = spec.path("boundObjectRef");
        if (ref.isObject()) {
            String kind = ref.path("kind").asText("");
            String apiVersion = ref.path("apiVersion").asText("v1");
            if (!apiVersion.equals("v1") || !List.of("Pod", "Secret", "Node").contains(kind)) {
                throw new ApiFront.ApiError(
                        400, "BadRequest", "cannot bind token to object of type " + groupVersionKind(apiVersion, kind));
            }
            ResourceType type = switch (kind) {
                case "Pod" -> Catalog.PODS;
                case "Secret" -> Catalog.SECRETS;
                default -> Catalog.NODES;
            };
            ObjectNode object = store.get(
                    type,
                    kind.equals("Node") ? null : namespace,
                    ref.path("name").asText(""));
            String uid = object.path("metadata").path("uid").asText();
            String givenUid = ref.path("uid").asText("");
            if (!givenUid.isEmpty() && !givenUid.equals(uid)) {
                throw new ApiFront.ApiError(
                        409,
                        "Conflict",
                        "Operation cannot be fulfilled on " + kind + " \""
                                + ref.path("name").asText()
                                + "\": the UID in the bound object reference (" + givenUid
                                + ") does not match the UID in record. The object might have been deleted and then"
                                + " recreated");
            }
            boundKind = kind.toLowerCase(java.util.Locale.ROOT);
            bound = new ServiceAccountTokens.Ref(ref.path("name").asText(), uid);
            if (kind.equals("Pod")) {
                String podSa = object.path("spec").path("serviceAccountName").asText("default");
                if (!podSa.equals(serviceAccountName)) {
                    throw new ApiFront.ApiError(
                            400,
                            "BadRequest",
                            "cannot bind token for serviceaccount \"" + serviceAccountName
                                    + "\" to pod running with different serviceaccount name.");
                }
                node = podNode(object);
            }
            ((ObjectNode) ref).put("uid", uid);
        }
        Instant expiry = clock.instant().truncatedTo(ChronoUnit.SECONDS).plusSeconds(seconds);
        String token = tokens.issue(
                namespace,
                new ServiceAccountTokens.Ref(
                        serviceAccountName, sa.path("metadata").path("uid").asText()),
                audiences,
                expiry,
                boundKind,
                bound,
                node);
        out.putObject("status").put("token", token).put("expirationTimestamp", expiry.toString());
        return out;
    }

    /** The node a pod runs on, as a token bound to the pod names it; null when unscheduled or gone. */
    private ServiceAccountTokens.Ref podNode(ObjectNode pod) {
        String nodeName = pod.path("spec").path("nodeName").asText("");
        if (nodeName.isEmpty()) {
            return null;
        }
        try {
            return new ServiceAccountTokens.Ref(
                    nodeName,
                    store.get(Catalog.NODES, null, nodeName)
                            .path("metadata")
                            .path("uid")
                            .asText());
        } catch (ApiFront.ApiError gone) {
            return null;
        }
    }

    private static String groupVersionKind(String apiVersion, String kind) {
        int slash = apiVersion.indexOf('/');
        String group = slash < 0 ? "" : apiVersion.substring(0, slash);
        String version = slash < 0 ? apiVersion : apiVersion.substring(slash + 1);
        return group + "/" + version + ", Kind=" + kind;
    }

    /** A name or namespace in the body must be the path's, as kube-apiserver requires. */
    private static void mustMatch(ObjectNode meta, String field, String expected, String what, String name) {
        String given = meta.path(field).asText("");
        if (!given.isEmpty() && !given.equals(expected)) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    "TokenRequest.authentication.k8s.io \"" + name + "\" is invalid: metadata." + field
                            + ": Invalid value: \"" + (given.length() > 253 ? given.substring(0, 253) + "..." : given)
                            + "\": must match the " + what
                            + " if specified");
        }
    }

    private static ApiFront.ApiError invalid(String value, String detail) {
        return new ApiFront.ApiError(
                422,
                "Invalid",
                "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: " + value
                        + ": " + detail);
    }
}
