/**
 * The Allocation resource, drover.dev/v1alpha1.
 *
 * <p>Fields a user leaves out are null in these classes, so {@code 0}/{@code false}
 * stay distinct from "not given"; the {@code effective...} methods apply the
 * defaults of docs/allocations.md. A real API server also fills the CRD's schema defaults
 * (the same values) into stored objects; the mock server does not, which is why
 * nothing here relies on them.
 *
 * <p>Enumerated fields are Java enums spelled as the API spells them. A value
 * outside an enum is rejected by the CRD's schema at the API server; a client
 * that meets one anyway gets a parse error naming the value, never a silent null.
 */
package dev.drover.api.v1alpha1;
