package dev.drover.local;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A create-only virtual resource (TokenReview, SubjectAccessReview...): the server answers the POSTed object with its
 * status filled in and stores nothing.
 */
interface Review {

    /**
     * @param request   the POSTed review
     * @param caller    who asks (a self review answers about them)
     * @param namespace the request path's namespace, for namespaced reviews; null otherwise
     * @return the review with its {@code status}
     */
    ObjectNode answer(ObjectNode request, UserInfo caller, String namespace);
}
