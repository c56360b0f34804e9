package dev.drover.taskrunner.identity;

import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.common.UserText;
import dev.drover.credentials.CredentialException;
import dev.drover.credentials.TypedSecret;
import dev.drover.image.DockerConfig;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Before each start of an {@code oci} task, reads the Secrets its allocation's {@code imagePullSecrets} names, with the
 * allocation's ServiceAccount (never the agent's rights), and lends their {@code .dockerconfigjson} to the driver for
 * the image's pull. Each must exist, be readable, be of type {@code kubernetes.io/dockerconfigjson} and hold a Docker
 * config the driver can read; otherwise the setup fails naming the Secret. Tasks of other drivers read none.
 */
public final class ImagePullSecrets implements TaskPrestartHook {

    /** The driver whose images are pulled: the only one lent registry credentials. */
    static final String OCI_DRIVER = "oci";
    /** The type a Secret of registry credentials has, as a Pod's imagePullSecrets require. */
    public static final String TYPE = "kubernetes.io/dockerconfigjson";
    /** The key such a Secret holds its document under. */
    public static final String KEY = ".dockerconfigjson";

    private final WorkloadIdentity identity;

    public ImagePullSecrets(WorkloadIdentity identity) {
        this.identity = identity;
    }

    @Override
    public String name() {
        return "image_pull_secrets";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        List<String> names = ctx.spec().imagePullSecretNames();
        if (!OCI_DRIVER.equals(ctx.task().getDriver()) || names.isEmpty()) {
            return;
        }
        String namespace = ctx.allocId().namespace();
        String serviceAccount = ctx.spec().effectiveServiceAccountName();
        for (int i = 0; i < names.size(); i++) {
            String what = "Secret " + namespace + "/" + names.get(i) + " (spec.imagePullSecrets[" + i + "])";
            byte[] config = config(read(namespace, serviceAccount, names.get(i), what), what);
            ctx.attachments().registryConfig(new String(config, StandardCharsets.UTF_8));
        }
    }

    /** The Secret, read with the ServiceAccount's token; the API server's absence is retried a few times. */
    private TypedSecret read(String namespace, String serviceAccount, String name, String what)
            throws TaskHookException {
        for (int attempt = 0; ; attempt++) {
            try {
                return identity.readAs(
                        namespace, serviceAccount, token -> identity.source().secret(namespace, name, token));
            } catch (CredentialException e) {
                if (e.reason() != CredentialException.Reason.UNAVAILABLE
                        || attempt >= WorkloadIdentity.SETUP_RETRIES.size()) {
                    throw new TaskHookException(TaskEventType.SetupFailure, failure(e, what, serviceAccount), e);
                }
                WorkloadIdentity.pauseBeforeRetry(WorkloadIdentity.SETUP_RETRIES.get(attempt));
            }
        }
    }

    /** The Secret's Docker config, checked: its type, its key, its size and that it can be read. */
    private static byte[] config(TypedSecret secret, String what) throws TaskHookException {
        if (!TYPE.equals(secret.type())) {
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    what + " is of type " + UserText.quote(UserText.cut(secret.type(), 100)) + "; an image pull"
                            + " Secret must be of type " + TYPE + " (kubectl create secret docker-registry)");
        }
        byte[] config = secret.data().get(KEY);
        if (config == null) {
            throw new TaskHookException(TaskEventType.SetupFailure, what + " has no key " + KEY);
        }
        if (config.length > DockerConfig.MAX_BYTES) {
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    what + " holds " + config.length + " bytes of " + KEY + "; at most " + DockerConfig.MAX_BYTES
                            + " are read");
        }
        try {
            DockerConfig.parse(config);
        } catch (IOException e) {
            throw new TaskHookException(TaskEventType.SetupFailure, what + ": " + e.getMessage());
        }
        return config;
    }

    private static String failure(CredentialException e, String what, String serviceAccount) {
        String said = UserText.cut(String.valueOf(e.getMessage()), 600);
        return switch (e.reason()) {
            case NOT_FOUND -> what + " was not found; create it, or remove it from spec.imagePullSecrets";
            case FORBIDDEN ->
                "cannot read " + what + " with ServiceAccount " + serviceAccount + " (give it get on that Secret): "
                        + said;
            case UNAVAILABLE -> "the API server could not be reached to read " + what + ": " + said;
            case INVALID -> "cannot read " + what + ": " + said;
        };
    }
}
