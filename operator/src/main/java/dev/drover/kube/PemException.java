package dev.drover.kube;

/** PEM (or the DER inside it) that cannot be used, said in one sentence naming what held it. */
public final class PemException extends Exception {

    public PemException(String message) {
        super(message);
    }
}
