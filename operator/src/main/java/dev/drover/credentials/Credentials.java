package dev.drover.credentials;

import java.util.Map;

/**
 * Where a task's credentials come from: tokens for the allocation's ServiceAccount, minted by the API server and
 * bound to this node, and the Secrets and ConfigMaps a task refers to, read <em>with such a token</em>, never with
 * the agent's own rights. Implemented over the Kubernetes API by the controller; faked in tests.
 */
public interface Credentials {

    /**
     * A new token for {@code serviceAccount} of {@code namespace}, bound to this agent's Node.
     *
     * @param audience          the one audience the token is for, or null for the API server's own
     * @param expirationSeconds the life asked for (the API server may give less: {@link ServiceAccountToken#expiry})
     */
    ServiceAccountToken token(String namespace, String serviceAccount, String audience, long expirationSeconds)
            throws CredentialException;

    /**
     * The data of one Secret or ConfigMap (ConfigMap {@code data} and {@code binaryData} together), read with
     * {@code token}.
     */
    Map<String, byte[]> read(ObjectRef ref, String token) throws CredentialException;

    /** Secret {@code name} of {@code namespace} with its type, read with {@code token}, as {@link #read} reads it. */
    TypedSecret secret(String namespace, String name, String token) throws CredentialException;
}
