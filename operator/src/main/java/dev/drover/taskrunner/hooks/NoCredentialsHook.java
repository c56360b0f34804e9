package dev.drover.taskrunner.hooks;

import dev.drover.api.v1alpha1.TaskEventType;
import dev.drover.taskrunner.TaskHookContext;
import dev.drover.taskrunner.TaskHookException;
import dev.drover.taskrunner.TaskPrestartHook;

/**
 * For an agent run without an API server to ask (an embedded or test setup): a task gets no token, and one that
 * refers to a Secret or ConfigMap, or an oci task whose allocation names {@code imagePullSecrets}, cannot be set up,
 * rather than run without what it asked for.
 */
public final class NoCredentialsHook implements TaskPrestartHook {

    @Override
    public String name() {
        return "credentials";
    }

    @Override
    public void prestart(TaskHookContext ctx) throws TaskHookException {
        if (ctx.task().usesObjects()) {
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    "this agent reads no Secrets or ConfigMaps (it runs without workload identity); the task refers"
                            + " to some");
        }
        if ("oci".equals(ctx.task().getDriver())
                && !ctx.spec().imagePullSecretNames().isEmpty()) {
            throw new TaskHookException(
                    TaskEventType.SetupFailure,
                    "this agent reads no Secrets (it runs without workload identity); the allocation names"
                            + " spec.imagePullSecrets for its image");
        }
    }
}
