package dev.drover.local;

import dev.drover.common.UserText;

/**
 * Who a write is recorded as in {@code managedFields}: the {@code fieldManager} query parameter, else the product of
 * the client's User-Agent ({@code kubectl-edit/v1.32.0 (linux/amd64) ...} is {@code kubectl-edit}), as the API
 * server derives it.
 */
final class FieldManagers {

    /** The API server's bound on a manager's name. */
    static final int MAX_LENGTH = 128;

    private FieldManagers() {}

    /** The manager of an ordinary write (create, update, merge or JSON patch). */
    static String forUpdate(Query query, String userAgent) {
        String given = query.get("fieldManager");
        if (given != null && !given.isEmpty()) {
            return checked(given);
        }
        String product = userAgent == null ? "" : userAgent.split("/", 2)[0].strip();
        boolean usable = !product.isEmpty() && product.chars().noneMatch(Character::isISOControl);
        return usable ? product.substring(0, Math.min(product.length(), MAX_LENGTH)) : "unknown";
    }

    /** The manager of an apply, which must name itself; 400 when it does not. */
    static String forApply(Query query) {
        String given = query.get("fieldManager");
        if (given == null || given.isEmpty()) {
            throw new ApiFront.ApiError(
                    400,
                    "BadRequest",
                    "PATCH, application/apply-patch+yaml: fieldManager is required for apply requests");
        }
        return checked(given);
    }

    /** The {@code force} parameter: only an apply may set it, to true or false. */
    static boolean force(Query query, boolean apply) {
        String force = query.get("force");
        if (force == null) {
            return false;
        }
        if (!apply) {
            throw new ApiFront.ApiError(422, "Invalid", "force: Forbidden: may not be specified for non-apply patch");
        }
        if (!force.equals("true") && !force.equals("false")) {
            throw new ApiFront.ApiError(400, "BadRequest", "force: Invalid value: " + UserText.quote(force));
        }
        return force.equals("true");
    }

    private static String checked(String manager) {
        if (manager.length() > MAX_LENGTH || manager.chars().anyMatch(Character::isISOControl)) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    "fieldManager: Invalid value: " + UserText.quote(manager) + ": must be at most " + MAX_LENGTH
                            + " characters, none a control character");
        }
        return manager;
    }
}
