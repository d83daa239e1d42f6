// Package templates is the part of OCM's policy templates that
// github.com/stolostron/go-template-utils/v7 leaves to its caller, written once
// for both exposures (the hub controller, the spoke controller and the KRM
// functions' offline preview). It does no I/O: reads happen in the Resolver a
// caller passes in (the library's *TemplateResolver, backed by a live API
// server through kubernetes-dependency-watches, or by an exported inventory),
// and randomness comes from an injected reader.
//
// Hub templates ({{hub ... hub}}) are resolved per managed cluster when a root
// Policy is replicated, as OCM's propagator v0.19 resolves them:
//
//   - Context: .ManagedClusterName, .ManagedClusterLabels and .PolicyMetadata
//     (the root's name, namespace, labels and annotations) — HubContext.
//   - Access rule (HubResolveOptions): without
//     spec.hubTemplateOptions.serviceAccountName a template may read only the
//     root policy's namespace, plus the cluster's own ManagedCluster; with it,
//     whatever that ServiceAccount may read (the caller builds the Resolver
//     with the ServiceAccount's credentials).
//   - Encryption: a policy template that calls protect, fromSecret or
//     copySecretData anywhere (OCM looks only right after "{{hub": a call in
//     parentheses or a pipeline would reach the replica in clear) is
//     resolved with the cluster's AES-256 key and the replica's
//     initialization vector (annotation
//     policy.open-cluster-management.io/encryption-iv, kept while it is valid,
//     made from the injected random reader otherwise), and the resolved
//     template carries the same annotation so that the spoke can decrypt.
//     What those functions return is always encrypted, so a template that
//     transforms it (base64dec, upper) transforms the ciphertext. A template
//     that read a Secret any other way (lookup) is refused with
//     ErrSecretInClear, where OCM writes the value in clear.
//   - Bounds: every resolution runs within Limits (Bound): a deadline and a
//     memory budget; past either it stops with a *BoundError.
//   - The annotation policy.open-cluster-management.io/disable-templates: "true"
//     (any form strconv.ParseBool reads as true) turns hub templates off; the
//     trigger-update annotation is never copied to a replica.
//   - .ManagedClusterLabels come from HubInputs.ClusterLabels, or, with a
//     caching resolver, through the library's caching query API
//     (ManagedClusterLabelsTransformer), which watches the ManagedCluster.
//   - Keys: NewKeySecret makes a cluster's policy-encryption-key Secret (32
//     random bytes, backup label, last-rotated annotation) and
//     PlanKeyRotation/ApplyKeyRotation rotate it as OCM's encryptionkeys
//     controller does (every 30 days by default, the old key kept as
//     previousKey, an invalid key replaced, disable-rotation honoured); the
//     caller passes the time and the random reader.
//   - Errors: ResolveHubTemplates resolves every template of the replica or
//     none. On any error it leaves the replica as it was and returns a
//     *HubTemplateError naming the policy template (index, kind and name) and
//     the library's message, so that the caller keeps the last good replica and
//     reports the error; it never returns a half-resolved replica.
//
// Telling a templated value (templated.go) is one rule for every exposure:
// IsTemplated is the library's HasTemplate with the default delimiter (a hub
// template starts with it too), IsHubTemplated looks for {{hub;
// TemplatedFields lists the templated fields (keys and values) of an object
// decoded from JSON by path, and WithoutTemplated drops them, so that a caller
// can decode the rest into a typed object whose non-string fields a template
// (toInt, toBool, toLiteral) would not fit. HubResolverConfig is the
// configuration of the library's resolver for hub templates, as OCM's
// propagator makes it (the {{hub ... hub}} delimiters, indentation 8).
package templates
