package dev.drover.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The manifests a registry serves, read under bounds: an OCI image index or Docker manifest list (one manifest per
 * platform), and an OCI image manifest or Docker schema 2 manifest (a config and its layers). Docker schema 1 is not
 * read: registries stopped serving it, and it carries no digests to check the layers by.
 */
final class Manifests {

    static final String OCI_INDEX = "application/vnd.oci.image.index.v1+json";
    static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    static final String DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
    static final String DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";
    static final String OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
    static final String DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";

    /** What a registry is asked for, most wanted first. */
    static final String ACCEPT = String.join(", ", OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST);

    /** A manifest or index larger than this is refused (as containerd bounds them). */
    static final int MAX_BYTES = 4 * 1024 * 1024;
    /** Platforms an index may list. */
    static final int MAX_ENTRIES = 1024;
    /** Layers an image may have (overlayfs mounts well under this many lower directories). */
    static final int MAX_LAYERS = 128;

    private static final Set<String> LAYER_TYPES = Set.of(
            "application/vnd.oci.image.layer.v1.tar",
            "application/vnd.oci.image.layer.v1.tar+gzip",
            "application/vnd.oci.image.layer.v1.tar+zstd",
            "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
            "application/vnd.docker.image.rootfs.diff.tar.gzip",
            "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip");

    private static final ObjectMapper JSON = new ObjectMapper();

    /** An image's manifest: its config and its layers, bottom first. */
    record Image(Descriptor config, List<Descriptor> layers) {}

    private Manifests() {}

    /** Whether {@code mediaType} is an index (or manifest list) rather than an image's manifest. */
    static boolean isIndex(String mediaType) {
        return OCI_INDEX.equals(mediaType) || DOCKER_LIST.equals(mediaType);
    }

    /**
     * The media type of {@code body}: the one the registry sent ({@code contentType}), else the one the document
     * states, else an image manifest's if it has layers (an OCI manifest need not state its type).
     */
    static String mediaType(String contentType, byte[] body) throws IOException {
        String sent = contentType == null ? "" : contentType.split(";", 2)[0].strip();
        if (isIndex(sent) || sent.equals(OCI_MANIFEST) || sent.equals(DOCKER_MANIFEST)) {
            return sent;
        }
        JsonNode root = read(body);
        String stated = text(root, "mediaType");
        if (stated != null) {
            return stated;
        }
        if (root.has("manifests")) {
            return OCI_INDEX;
        }
        return OCI_MANIFEST;
    }

    /** The manifest for {@code platform} in an index; empty when it lists none that runs there. */
    static Optional<Descriptor> forPlatform(byte[] index, Platform platform) throws IOException {
        JsonNode manifests = read(index).get("manifests");
        if (manifests == null || !manifests.isArray()) {
            throw new IOException("the image index has no \"manifests\" list");
        }
        if (manifests.size() > MAX_ENTRIES) {
            throw new IOException("the image index lists " + manifests.size() + " manifests, more than " + MAX_ENTRIES);
        }
        for (JsonNode m : manifests) {
            JsonNode p = m.get("platform");
            if (p != null && platform.runs(text(p, "os"), text(p, "architecture"), text(p, "variant"))) {
                Descriptor d = descriptor(m, "an index entry");
                if (!isIndex(d.mediaType())) {
                    return Optional.of(d);
                }
            }
        }
        return Optional.empty();
    }

    /** The platforms an index lists, for a message saying which there were. */
    static List<String> platforms(byte[] index) throws IOException {
        List<String> out = new ArrayList<>();
        JsonNode manifests = read(index).get("manifests");
        if (manifests != null) {
            for (JsonNode m : manifests) {
                JsonNode p = m.get("platform");
                if (p != null && out.size() < UserText.LIST_LIMIT) {
                    String variant = text(p, "variant");
                    out.add(text(p, "os") + "/" + text(p, "architecture") + (variant == null ? "" : "/" + variant));
                }
            }
        }
        return out;
    }

    /** An image's manifest: its config and layers, each layer of a type the agent can unpack. */
    static Image image(byte[] manifest) throws IOException {
        JsonNode root = read(manifest);
        JsonNode config = root.get("config");
        if (config == null) {
            throw new IOException("the image manifest has no config");
        }
        Descriptor c = descriptor(config, "the config");
        if (!c.mediaType().equals(OCI_CONFIG) && !c.mediaType().equals(DOCKER_CONFIG)) {
            throw new IOException("the image's config is of type " + UserText.quote(c.mediaType())
                    + ", not a container image's (is this an artifact, not an image?)");
        }
        JsonNode layers = root.get("layers");
        if (layers == null || !layers.isArray()) {
            throw new IOException("the image manifest has no \"layers\" list");
        }
        if (layers.size() > MAX_LAYERS) {
            throw new IOException("the image has " + layers.size() + " layers, more than " + MAX_LAYERS);
        }
        List<Descriptor> out = new ArrayList<>();
        for (JsonNode l : layers) {
            Descriptor d = descriptor(l, "a layer");
            if (!LAYER_TYPES.contains(d.mediaType())) {
                throw new IOException("the image has a layer of type " + UserText.quote(d.mediaType())
                        + ", which is not an uncompressed, gzip or zstd tar");
            }
            out.add(d);
        }
        return new Image(c, List.copyOf(out));
    }

    private static Descriptor descriptor(JsonNode node, String what) throws IOException {
        String mediaType = text(node, "mediaType");
        String digest = text(node, "digest");
        JsonNode size = node.get("size");
        if (mediaType == null || digest == null || size == null || !size.canConvertToLong()) {
            throw new IOException(what + " lacks its mediaType, digest or size");
        }
        try {
            return new Descriptor(mediaType, Digest.parse(digest), size.asLong());
        } catch (IllegalArgumentException e) {
            throw new IOException(what + ": " + e.getMessage());
        }
    }

    private static JsonNode read(byte[] body) throws IOException {
        try {
            JsonNode root = JSON.readTree(body);
            if (root == null || !root.isObject()) {
                throw new IOException("not a JSON object");
            }
            return root;
        } catch (IOException e) {
            throw new IOException("the registry's manifest is not a JSON object");
        }
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || !v.isTextual() ? null : v.asText();
    }
}
