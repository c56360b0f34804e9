package dev.drover.podresources;

/** The kubelet's PodResources API did not answer, or answered what cannot be read; the message is one sentence. */
public final class PodResourcesException extends Exception {

    public PodResourcesException(String message) {
        super(message);
    }

    public PodResourcesException(String message, Throwable cause) {
        super(message, cause);
    }
}
