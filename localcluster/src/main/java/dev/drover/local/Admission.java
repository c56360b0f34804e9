package dev.drover.local;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * Validating admission: runs after a write's object is built and checked against its schema, before it is stored,
 * and refuses it by throwing an {@link ApiFront.ApiError}.
 */
interface Admission {

    /** What is being written, by whom. */
    record Request(
            Operation operation,
            ResourceType type,
            String subresource,
            String namespace,
            String name,
            ObjectNode object,
            ObjectNode oldObject,
            UserInfo user,
            boolean dryRun) {}

    enum Operation {
        CREATE,
        UPDATE,
        DELETE
    }

    /** Throws an {@link ApiFront.ApiError} to refuse the write. */
    void admit(Request request);

    /** Admits everything. */
    Admission NONE = request -> {};

    /** Each of {@code steps} in turn; the first to refuse refuses. */
    static Admission all(Admission... steps) {
        List<Admission> list = List.of(steps);
        return request -> list.forEach(step -> step.admit(request));
    }
}
