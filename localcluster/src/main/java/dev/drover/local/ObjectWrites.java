package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Writes through the API: create, replace, merge and JSON patch, and server-side apply. Each is checked against the
 * type's schema and CEL rules (defaults filled in), admitted, recorded in {@code managedFields} and stored.
 */
final class ObjectWrites {

    /** A write as it came in. */
    record Request(
            String method,
            ResourceType type,
            ResourcePath path,
            Query query,
            UserInfo user,
            byte[] body,
            String contentType,
            String userAgent) {}

    /** The answer: 201 with the created object, 200 with the updated one. */
    record Written(int code, ObjectNode object) {}

    private final ObjectStore store;
    private final Clock clock;
    private final KubeVersion version;
    private final Admission admission;
    private final CrdRules rules;
    private final Authorizer authorizer;
    private final Consumer<ResourceType> catalogChanged;

    ObjectWrites(
            ObjectStore store,
            Clock clock,
            KubeVersion version,
            Admission admission,
            CrdRules rules,
            Authorizer authorizer,
            Consumer<ResourceType> catalogChanged) {
        this.store = store;
        this.clock = clock;
        this.version = version;
        this.admission = admission;
        this.rules = rules;
        this.authorizer = authorizer;
        this.catalogChanged = catalogChanged;
    }

    /** Carries out {@code r}: a create, an update, a patch or an apply. */
    Written write(Request r) {
        String method = r.method();
        ResourceType type = r.type();
        ResourcePath rp = r.path();
        Query query = r.query();
        UserInfo user = r.user();
        byte[] raw = r.body();
        boolean dryRun = "All".equals(query.get("dryRun"));
        boolean strict = "Strict".equals(query.get("fieldValidation"));
        String contentType = r.contentType();
        boolean apply = method.equals("PATCH") && ServerSideApply.isApply(contentType);
        boolean force = FieldManagers.force(query, apply);
        String manager = apply ? FieldManagers.forApply(query) : FieldManagers.forUpdate(query, r.userAgent());
        if (method.equals("POST")) {
            ObjectNode body = RequestBodies.object(raw, type.kind());
            strictFields(type, body, strict);
            return create(
                    type,
                    rp,
                    user,
                    dryRun,
                    ManagedFields.recordUpdate(type, null, body, manager, null, clock.instant()));
        }
        boolean statusWrite = "status".equals(rp.subresource());
        if (apply) {
            ObjectNode config = ServerSideApply.config(raw, type, rp.name());
            strictFields(type, config, strict);
            // before the merge, which runs under the store's lock and grows with the lists it merges
            Problems tooMany = SchemaValidator.tooMany(config, type.schema());
            if (!tooMany.isEmpty()) {
                throw invalid(type, config, tooMany);
            }
            if (!statusWrite && !store.exists(type, rp.namespace(), rp.name())) {
                // as the API server: applying to an object that does not exist creates it, which the user must be
                // allowed to do; the request was authorized as a patch only
                authorizeCreate(user, rp);
                try {
                    return create(
                            type,
                            rp,
                            user,
                            dryRun,
                            ServerSideApply.apply(type, null, config, manager, force, null, clock.instant()));
                } catch (ApiFront.ApiError e) {
                    if (e.code != 409 || !"AlreadyExists".equals(e.reason)) {
                        throw e;
                    }
                    // another request created it since exists() above: as the API server, the apply updates it
                }
            }
            return update(
                    type,
                    rp,
                    user,
                    dryRun,
                    current -> ServerSideApply.apply(
                            type, current, config, manager, force, rp.subresource(), clock.instant()),
                    null);
        }
        boolean jsonPatch = contentType != null && contentType.contains("json-patch");
        if (method.equals("PUT")) {
            NestingDepth.check(raw, type.kind()); // the whole object: too deep, refused as a create's body is
        }
        JsonNode body = RequestBodies.parse(raw);
        if (!jsonPatch) {
            // No strategic merge here: a strategic merge patch is applied as a merge patch, list fields whole (a
            // Pod's containers excepted: merged by name, PodResize.strategicAsMerge).
            strictFields(type, body, strict);
        }
        UnaryOperator<ObjectNode> change;
        if (method.equals("PUT")) {
            ObjectNode replacement = RequestBodies.object(raw, type.kind());
            change = current -> replacement;
        } else {
            boolean strategicPod = !jsonPatch
                    && type.equals(Catalog.PODS)
                    && contentType != null
                    && contentType.contains("strategic-merge-patch");
            change = current -> {
                JsonNode patch = strategicPod ? PodResize.strategicAsMerge(current, body) : body;
                if (!(Patches.apply(current, patch, jsonPatch) instanceof ObjectNode patched)) {
                    throw new ApiFront.ApiError(422, "Invalid", "the patch does not leave an object");
                }
                return patched;
            };
        }
        return update(type, rp, user, dryRun, change, manager);
    }

    /** Refuses, with the API server's 403, a user who may not create the object at {@code rp}. */
    private void authorizeCreate(UserInfo user, ResourcePath rp) {
        RequestInfo asCreate = new RequestInfo("create", null, rp, rp.name());
        Authorizer.Decision decision = authorizer.authorize(user, asCreate);
        if (!decision.allowed()) {
            throw Forbidden.of(user, asCreate, decision.reason());
        }
    }

    private Written create(ResourceType type, ResourcePath rp, UserInfo user, boolean dryRun, ObjectNode body) {
        ObjectNode mutated = admission.mutate(new Admission.Request(
                Admission.Operation.CREATE,
                type,
                rp.subresource(),
                rp.namespace(),
                body.path("metadata").path("name").asText(""),
                body,
                null,
                user,
                dryRun));
        ObjectNode checked = checked(type, mutated, true, null, null);
        admission.admit(new Admission.Request(
                Admission.Operation.CREATE,
                type,
                rp.subresource(),
                rp.namespace(),
                checked.path("metadata").path("name").asText(""),
                checked,
                null,
                user,
                dryRun));
        ObjectNode created = store.create(type, rp.namespace(), checked, dryRun);
        if (type.equals(Catalog.NAMESPACES) && !dryRun) {
            ServiceAccounts.createDefault(
                    store, created.path("metadata").path("name").asText());
        }
        catalogChanged.accept(type);
        return new Written(201, created);
    }

    /** An update by {@code change}; {@code manager} (null: the change keeps its own) is recorded as an Update. */
    private Written update(
            ResourceType type,
            ResourcePath rp,
            UserInfo user,
            boolean dryRun,
            UnaryOperator<ObjectNode> change,
            String manager) {
        boolean statusWrite = "status".equals(rp.subresource());
        ObjectNode updated = store.update(
                type,
                rp.namespace(),
                rp.name(),
                statusWrite,
                current -> {
                    ObjectNode mutated = admission.mutate(new Admission.Request(
                            Admission.Operation.UPDATE,
                            type,
                            rp.subresource(),
                            rp.namespace(),
                            rp.name(),
                            change.apply(current.deepCopy()) /* current stays the old object */,
                            current,
                            user,
                            dryRun));
                    ObjectNode checked = checked(type, mutated, !statusWrite, current, rp.subresource());
                    // admission sees what the write can change, as on a real API server: the strategy runs first
                    ObjectNode prepared = PodResize.SUBRESOURCE.equals(rp.subresource())
                            ? PodResize.prepare(current, checked)
                            : RegistryStrategy.prepareForUpdate(type, current, checked, statusWrite);
                    if (manager != null) {
                        ManagedFields.recordUpdate(type, current, prepared, manager, rp.subresource(), clock.instant());
                    }
                    admission.admit(new Admission.Request(
                            Admission.Operation.UPDATE,
                            type,
                            rp.subresource(),
                            rp.namespace(),
                            rp.name(),
                            prepared,
                            current,
                            user,
                            dryRun));
                    return prepared;
                },
                dryRun);
        catalogChanged.accept(type);
        return new Written(200, updated);
    }

    /**
     * Fills in schema defaults and checks the object against its schema; returns it. As the real server does, the
     * CRD's CEL rules are checked too when the schema errors are not type errors, and both are reported together.
     */
    private ObjectNode checked(
            ResourceType type, ObjectNode object, boolean withDefaults, ObjectNode old, String subresource) {
        if (type.equals(Catalog.CRDS)) {
            version.stored(object);
        }
        NestingDepth.checkPatched(object);
        if (type.schema() == null) {
            return object;
        }
        if (withDefaults) {
            SchemaValidator.applyDefaults(object, type.schema());
        }
        SchemaValidator.Result result = SchemaValidator.validate(object, type.schema(), true);
        if (!result.invalid().isEmpty()) {
            Problems errors = result.invalid();
            if (errors.stream().noneMatch(e -> e.contains(" must be of type "))) {
                errors.addAll(rules.errors(type, object, old, subresource));
            }
            throw invalid(type, object, errors);
        }
        return object;
    }

    /** The API server's 422 for {@code object}, naming its {@code errors}. */
    private static ApiFront.ApiError invalid(ResourceType type, JsonNode object, Problems errors) {
        return new ApiFront.ApiError(
                422,
                "Invalid",
                type.kind() + "." + type.group() + " \""
                        + object.path("metadata").path("name").asText("") + "\" is invalid: "
                        + (errors.size() == 1 && errors.more() == 0
                                ? errors.getFirst()
                                : "[" + errors.joined(", ") + "]"));
    }

    /** With fieldValidation=Strict, fields the schema does not declare are refused, each named. */
    private static void strictFields(ResourceType type, JsonNode body, boolean strict) {
        if (!strict || type.schema() == null) {
            return;
        }
        Problems unknown = SchemaValidator.validate(body, type.schema(), false).unknownFields();
        if (!unknown.isEmpty()) {
            throw new ApiFront.ApiError(
                    400,
                    "BadRequest",
                    type.kind() + " in version \"" + type.version()
                            + "\" cannot be handled as a " + type.kind() + ": strict decoding error: "
                            + String.join(
                                    ", ",
                                    unknown.stream()
                                            .map(f -> "unknown field \"" + f + "\"")
                                            .toList())
                            + (unknown.more() == 0 ? "" : ", ... and " + unknown.more() + " more"));
        }
    }
}
