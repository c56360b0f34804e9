package dev.drover.api.crd;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;

/** One change {@link CrdPostProcessor} makes to the generated CRD, for what fabric8's generator cannot express. */
interface CrdStep {

    /** Changes {@code crd} in place. */
    void apply(CustomResourceDefinition crd);
}
