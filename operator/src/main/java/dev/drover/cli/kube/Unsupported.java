package dev.drover.cli.kube;

/**
 * A kubeconfig that asks for what this client does not do (an {@code auth-provider}, a {@code proxy-url}, a proxy
 * in the environment, impersonation...): the plugin then takes the fabric8 client, which reads it as before.
 */
public final class Unsupported extends Exception {

    public Unsupported(String what) {
        super(what, null, false, false);
    }
}
