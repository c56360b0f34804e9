package dev.drover.cli.kube;

/** A kubeconfig (or what it points at) that cannot be used, said in one sentence with what to do. */
public final class KubeconfigException extends Exception {

    public KubeconfigException(String message) {
        super(message);
    }
}
