package dev.drover.api.v1alpha1;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a list field as a map keyed by the named fields of its items ({@code x-kubernetes-list-type: map}):
 * the API server refuses duplicate keys and server-side apply merges the list item by item, so two managers may
 * own different items. Every key must be a required field of the item. The CRD build step
 * {@code dev.drover.api.crd.ListMaps} writes it into the CRD.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface ListMapKeys {

    String[] value();
}
