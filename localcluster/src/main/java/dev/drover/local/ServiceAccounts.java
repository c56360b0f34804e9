package dev.drover.local;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** What a cluster's service-account controller does here: every namespace gets a ServiceAccount named default. */
final class ServiceAccounts {

    private ServiceAccounts() {}

    static void createDefault(ObjectStore store, String namespace) {
        ObjectNode sa =
                JsonNodeFactory.instance.objectNode().put("apiVersion", "v1").put("kind", "ServiceAccount");
        sa.putObject("metadata").put("name", "default").put("namespace", namespace);
        try {
            store.create(Catalog.SERVICE_ACCOUNTS, namespace, sa, false);
        } catch (ApiFront.ApiError exists) {
            // made already
        }
    }
}
