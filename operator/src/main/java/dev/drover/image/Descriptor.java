package dev.drover.image;

/** A piece of an image as a manifest points at it: what it is, its digest and its exact size. */
public record Descriptor(String mediaType, Digest digest, long size) {

    public Descriptor {
        if (size < 0) {
            throw new IllegalArgumentException("a descriptor's size is negative: " + size);
        }
    }
}
