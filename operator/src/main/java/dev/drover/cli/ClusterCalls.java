package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Event;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * The API server calls the plugin's commands make, with the kubeconfig's credentials: {@link DirectCalls} on the
 * plugin's own small client (the common case: it starts fast), {@link Fabric8Calls} on fabric8's (a kubeconfig that
 * asks for what the small one does not do). Each failure is a {@link CommandFailure} in one sentence.
 */
interface ClusterCalls {

    /** Where the API server is, as messages name it. */
    String server();

    /** The allocation; null when there is none of that name. */
    AllocationParts allocation(String namespace, String name) throws CommandFailure;

    /** The Events recorded on the allocation {@code name} (any uid); null when this user may not list Events. */
    List<Event> events(String namespace, String name) throws CommandFailure;

    /**
     * A list's items with their metadata only (a {@code PartialObjectMetadataList} where the API server makes one, so
     * Nodes come without their images), at {@code pathAndQuery} (from {@code /api} or {@code /apis}, its query
     * bounding the list with {@code limit}); the answer's {@code items}.
     */
    JsonNode metadataList(String pathAndQuery) throws CommandFailure;

    /** Applies a JSON merge patch to the allocation. */
    void patch(String namespace, String name, String mergePatch) throws CommandFailure;

    /** The caller's user name as the API server authenticates them (a SelfSubjectReview); null when it cannot say. */
    String whoAmI();

    /**
     * Sends {@code method} (GET or POST, without a body) to an allocation's subresource of the aggregated API {@code
     * agent.drover.dev} and hands a 200's body, as it streams in, to {@code reader}.
     */
    <T> T agent(String method, String namespace, String alloc, String subresourceAndQuery, BodyReader<T> reader)
            throws CommandFailure;

    /** Reads a successful answer's body; it is closed afterwards. */
    interface BodyReader<T> {
        T read(InputStream body) throws IOException;
    }
}
