package dev.drover.cli.kube;

import java.util.List;
import java.util.Map;

/**
 * A kubeconfig user's {@code exec} credential plugin (client.authentication.k8s.io/v1 or v1beta1).
 *
 * @param command the program, resolved against the kubeconfig's directory when it is a relative path with a slash
 * @param env what the kubeconfig adds to the plugin's environment
 * @param clusterInfo the {@code spec.cluster} of {@code KUBERNETES_EXEC_INFO} when the kubeconfig asks to provide
 *     it ({@code provideClusterInfo}); null otherwise
 */
public record ExecConfig(
        String apiVersion,
        String command,
        List<String> args,
        Map<String, String> env,
        String installHint,
        Map<String, Object> clusterInfo) {}
