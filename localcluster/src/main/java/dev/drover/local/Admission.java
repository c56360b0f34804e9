package dev.drover.local;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * Admission as a real API server runs it: mutating admission first ({@link #mutate}, on the object a create or update
 * would store, before it is checked against its schema), then validating admission ({@link #admit}, after the check,
 * before the object is stored), which refuses it by throwing an {@link ApiFront.ApiError}.
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
            boolean dryRun) {

        Request with(ObjectNode changed) {
            return new Request(operation, type, subresource, namespace, name, changed, oldObject, user, dryRun);
        }
    }

    enum Operation {
        CREATE,
        UPDATE,
        DELETE
    }

    /** Throws an {@link ApiFront.ApiError} to refuse the write. */
    void admit(Request request);

    /** The object the request should write instead of its own; a refusal throws. Most steps change nothing. */
    default ObjectNode mutate(Request request) {
        return request.object();
    }

    /** Admits everything. */
    Admission NONE = request -> {};

    /** Each of {@code steps} in turn, mutating ones each on what the one before left; the first to refuse refuses. */
    static Admission all(Admission... steps) {
        List<Admission> list = List.of(steps);
        return new Admission() {
            @Override
            public void admit(Request request) {
                list.forEach(step -> step.admit(request));
            }

            @Override
            public ObjectNode mutate(Request request) {
                Request current = request;
                for (Admission step : list) {
                    ObjectNode object = step.mutate(current);
                    if (object != current.object()) {
                        current = current.with(object);
                    }
                }
                return current.object();
            }
        };
    }
}
