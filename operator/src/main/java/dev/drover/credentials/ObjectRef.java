package dev.drover.credentials;

import java.util.Objects;

/** A Secret or ConfigMap a task refers to, by kind, namespace (the allocation's) and name. */
public record ObjectRef(Kind kind, String namespace, String name) {

    public enum Kind {
        Secret,
        ConfigMap
    }

    public ObjectRef {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
    }

    @Override
    public String toString() {
        return kind + " " + namespace + "/" + name;
    }
}
