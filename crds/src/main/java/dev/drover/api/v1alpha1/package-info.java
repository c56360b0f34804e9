/** The Allocation resource, drover.dev/v1alpha1. */
package dev.drover.api.v1alpha1;
