package dev.drover.local;

/** Decides whether a user may make a request: the server asks before it serves anything. */
interface Authorizer {

    /**
     * @param allowed whether the request may go on
     * @param reason  why, for SubjectAccessReview's {@code status.reason}; on a denial, appended to the Forbidden
     *                message when not empty (as RBAC appends the roles it could not find)
     */
    record Decision(boolean allowed, String reason) {}

    Decision authorize(UserInfo user, RequestInfo request);
}
