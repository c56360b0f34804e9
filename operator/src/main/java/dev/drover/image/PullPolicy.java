package dev.drover.image;

/** When an image is fetched from its registry, as a Pod's {@code imagePullPolicy}. */
public enum PullPolicy {
    /** Every start asks the registry what the reference names now; the content is fetched only if new. */
    Always,
    /** The image is fetched only when the node has none for the reference. */
    IfNotPresent,
    /** Never fetched: a start without the image on the node fails. */
    Never
}
