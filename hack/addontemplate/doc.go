// Command addontemplate writes the AddOnTemplate of the fleetpolicy OCM add-on
// (manifests/addon/addontemplate.yaml): it reads a template whose
// agentSpec.workload.manifests is empty and fills it with every object of the
// YAML streams it is given, in order, marking the kinds named by -orphan with
// OCM's addon.open-cluster-management.io/deletion-orphan annotation (so that
// removing the add-on leaves them on the managed cluster).
//
//	addontemplate -template manifests/addon/agent/template.yaml \
//	  -orphan CustomResourceDefinition crd1.yaml crd2.yaml - > manifests/addon/addontemplate.yaml
//
// "-" reads standard input (`kustomize build manifests/addon/agent`). It
// refuses an object without apiVersion, kind or name, and a second object of
// the same kind, namespace and name. `make generate` runs it; `make verify`
// fails when the committed file is stale. It reads and writes files only.
package main
