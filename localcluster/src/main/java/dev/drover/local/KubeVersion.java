package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The Kubernetes version the local API server behaves as, where Drover depends on the difference: before 1.31 a
 * CRD's {@code selectableFields} are dropped when it is stored (the feature is alpha and off in 1.30), so a field
 * selector on such a field is refused as a real 1.30 server refuses it; from 1.33 Pods have the {@code resize}
 * subresource (InPlacePodVerticalScaling, beta and on), and from 1.34 the kubelet reports the generation it acted
 * on ({@code status.observedGeneration}, PodObservedGenerationTracking); from 1.36 it serves
 * {@code admissionregistration.k8s.io/v1} MutatingAdmissionPolicy and its binding (GA), and applies them.
 *
 * @param minor the minor version of Kubernetes 1.x
 */
record KubeVersion(int minor) {

    /** The oldest version the server can act as: the CRD's CEL rules need 1.25. */
    static final int OLDEST = 25;
    /** The newest version it acts as. */
    static final int NEWEST_MINOR = 36;
    /** The version it acts as when none is asked for. */
    static final int DEFAULT_MINOR = 32;

    static final KubeVersion NEWEST = new KubeVersion(NEWEST_MINOR);
    static final KubeVersion DEFAULT = new KubeVersion(DEFAULT_MINOR);

    KubeVersion {
        if (minor < OLDEST || minor > NEWEST_MINOR) {
            throw new IllegalArgumentException(
                    "Kubernetes 1." + minor + " is not one this server acts as: 1." + OLDEST + " to 1." + NEWEST_MINOR);
        }
    }

    /** {@code 1.30} (or {@code v1.30}) as a version; anything else is an IllegalArgumentException saying so. */
    static KubeVersion parse(String text) {
        String v = text.startsWith("v") ? text.substring(1) : text;
        if (!v.matches("1\\.[0-9]{1,3}")) {
            throw new IllegalArgumentException("\"" + text + "\" is not a Kubernetes version like 1.30");
        }
        return new KubeVersion(Integer.parseInt(v.substring(2)));
    }

    /** Whether CRDs keep {@code selectableFields} (beta and on from 1.31). */
    boolean selectableFields() {
        return minor >= 31;
    }

    /** Whether a watch may stream the initial state itself ({@code sendInitialEvents}; WatchList, on from 1.32). */
    boolean watchList() {
        return minor >= 32;
    }

    /** Whether Pods have the {@code resize} subresource (InPlacePodVerticalScaling, on from 1.33). */
    boolean podResize() {
        return minor >= 33;
    }

    /** Whether the kubelet reports {@code observedGeneration} in a Pod's status (on from 1.34). */
    boolean podObservedGeneration() {
        return minor >= 34;
    }

    /** Whether MutatingAdmissionPolicy v1 is served and applied (GA from 1.36; beta and off by default before). */
    boolean mutatingAdmissionPolicies() {
        return minor >= 36;
    }

    /** What {@code GET /version} answers. */
    ObjectNode versionDocument() {
        return JsonNodeFactory.instance
                .objectNode()
                .put("major", "1")
                .put("minor", Integer.toString(minor))
                .put("gitVersion", "v1." + minor + ".0-drover-local")
                .put("platform", "linux/amd64");
    }

    /** A CRD as this version stores it: without {@code selectableFields} where the version has none. */
    ObjectNode stored(ObjectNode crd) {
        if (!selectableFields()) {
            for (JsonNode version : crd.path("spec").path("versions")) {
                if (version instanceof ObjectNode v) {
                    v.remove("selectableFields");
                }
            }
        }
        return crd;
    }
}
