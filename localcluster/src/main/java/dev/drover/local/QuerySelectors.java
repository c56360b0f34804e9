package dev.drover.local;

/**
 * The field and label selectors of a request's query, parsed and checked as kube-apiserver does: a malformed one is a
 * 400, and so is a field selector on a field the resource cannot be selected by.
 */
final class QuerySelectors {

    private QuerySelectors() {}

    /** The request's field selector; a malformed one, or one on a field the type cannot select on, is a 400. */
    static FieldSelector fieldSelector(ResourceType type, Query query) {
        FieldSelector fields;
        try {
            fields = FieldSelector.parse(query.get("fieldSelector"));
        } catch (IllegalArgumentException e) {
            throw new ApiFront.ApiError(400, "BadRequest", e.getMessage());
        }
        supported(type, fields, query);
        return fields;
    }

    /**
     * A custom resource is selected by {@code metadata.name}, {@code metadata.namespace} and its CRD's
     * {@code selectableFields} only; any other field is refused with the real server's message.
     */
    private static void supported(ResourceType type, FieldSelector fields, Query query) {
        if (Catalog.BUILT_IN.contains(type)) {
            return;
        }
        for (FieldSelector.Term t : fields.terms()) {
            if (!t.path().equals("metadata.name")
                    && !t.path().equals("metadata.namespace")
                    && !type.selectableFields().contains(t.path())) {
                throw new ApiFront.ApiError(
                        400,
                        "BadRequest",
                        "Unable to find \"" + type.group() + "/" + type.version() + ", Resource=" + type.plural()
                                + "\" that match label selector \"" + nullToEmpty(query.get("labelSelector"))
                                + "\", field selector \"" + nullToEmpty(query.get("fieldSelector"))
                                + "\": field label not supported: " + t.path());
            }
        }
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    /** The request's label selector; a malformed one is a 400. */
    static LabelSelector labelSelector(Query query) {
        try {
            return LabelSelector.parse(query.get("labelSelector"));
        } catch (IllegalArgumentException e) {
            throw new ApiFront.ApiError(400, "BadRequest", e.getMessage());
        }
    }
}
