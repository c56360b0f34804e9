package dev.drover.image;

import dev.drover.common.UserText;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An image as a task names it: {@code [registry/]repository[:tag][@sha256:DIGEST]}, read as Docker and the kubelet
 * read it. No registry means Docker Hub ({@code docker.io}, whose one-word repositories live under {@code library/});
 * the first component is a registry when it holds a dot or a port, or is {@code localhost}. A reference with a digest
 * pulls that content whatever its tag says.
 *
 * @param registry   the registry's host, with its port if one was given ({@code docker.io} for Docker Hub)
 * @param repository the repository path within the registry
 * @param tag        the tag, or null ({@code latest} when neither a tag nor a digest is given)
 * @param digest     the content asked for, or null
 */
public record ImageReference(String registry, String repository, String tag, Digest digest) {

    /** Docker Hub's name in references. */
    public static final String DOCKER_HUB = "docker.io";
    /** The host Docker Hub's registry API answers on. */
    static final String DOCKER_HUB_API = "registry-1.docker.io";
    /** The longest repository name (registry included) the distribution spec lets a registry refuse beyond. */
    static final int MAX_NAME = 255;

    private static final Pattern COMPONENT = Pattern.compile("[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*");
    private static final Pattern TAG = Pattern.compile("\\w[\\w.-]{0,127}");
    private static final Pattern HOST = Pattern.compile(
            "(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
                    + "|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?");

    /** Reads {@code image}; throws {@link IllegalArgumentException} saying which part is wrong. */
    public static ImageReference parse(String image) {
        if (image == null || image.isBlank()) {
            throw new IllegalArgumentException("image is empty");
        }
        if (image.length() > MAX_NAME + 1 + 128 + 1 + 71) {
            throw new IllegalArgumentException("image " + UserText.quote(image) + " is too long");
        }
        String rest = image;
        Digest digest = null;
        int at = rest.indexOf('@');
        if (at >= 0) {
            try {
                digest = Digest.parse(rest.substring(at + 1));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("image " + UserText.quote(image) + ": " + e.getMessage());
            }
            rest = rest.substring(0, at);
        }
        String tag = null;
        int colon = rest.lastIndexOf(':');
        if (colon > rest.lastIndexOf('/')) {
            tag = rest.substring(colon + 1);
            rest = rest.substring(0, colon);
            if (!TAG.matcher(tag).matches()) {
                throw new IllegalArgumentException("image " + UserText.quote(image) + " has an invalid tag "
                        + UserText.quote(tag) + " (letters, digits, '_', '.', '-'; at most 128)");
            }
        }
        String registry = DOCKER_HUB;
        String repository = rest;
        int slash = rest.indexOf('/');
        if (slash > 0) {
            String first = rest.substring(0, slash);
            if (first.contains(".") || first.contains(":") || first.equals("localhost")) {
                registry = first.equals("index.docker.io") ? DOCKER_HUB : first;
                repository = rest.substring(slash + 1);
                if (!HOST.matcher(registry).matches()) {
                    throw new IllegalArgumentException("image " + UserText.quote(image) + " names an invalid registry "
                            + UserText.quote(registry));
                }
            }
        }
        if (registry.equals(DOCKER_HUB) && !repository.contains("/")) {
            repository = "library/" + repository;
        }
        for (String component : repository.split("/", -1)) {
            if (!COMPONENT.matcher(component).matches()) {
                throw new IllegalArgumentException("image " + UserText.quote(image) + " has an invalid repository "
                        + UserText.quote(repository) + " (lowercase letters, digits and separators '.', '_', '-')");
            }
        }
        if (registry.length() + 1 + repository.length() > MAX_NAME) {
            throw new IllegalArgumentException(
                    "image " + UserText.quote(image) + " has a name longer than " + MAX_NAME + " characters");
        }
        return new ImageReference(registry, repository, tag, digest);
    }

    /** What the task's manifest is asked for by: the digest if there is one, else the tag ({@code latest} if none). */
    public String manifestReference() {
        if (digest != null) {
            return digest.toString();
        }
        return tag == null ? "latest" : tag;
    }

    /** The host and port the registry's API answers on. */
    public String apiHost() {
        return registry.equals(DOCKER_HUB) ? DOCKER_HUB_API : registry;
    }

    /**
     * The pull policy when the task names none, as the kubelet's: {@code Always} for {@code :latest} or for a
     * reference with neither a tag nor a digest, else {@code IfNotPresent}.
     */
    public PullPolicy defaultPullPolicy() {
        boolean latest = digest == null && (tag == null || tag.equals("latest"));
        return latest ? PullPolicy.Always : PullPolicy.IfNotPresent;
    }

    public Optional<Digest> pinned() {
        return Optional.ofNullable(digest);
    }

    /** The reference in full: {@code registry/repository[:tag][@digest]}. */
    @Override
    public String toString() {
        return registry + "/" + repository + (tag == null ? "" : ":" + tag) + (digest == null ? "" : "@" + digest);
    }
}
