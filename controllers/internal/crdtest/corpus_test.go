package crdtest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// ocmSchema is one served version of an OCM CRD, ready to validate objects as
// OCM's API server would.
type ocmSchema struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
}

// ocmSchemas reads OCM v0.19.0's CRDs of the kinds fleetpolicy serves in
// their place (testdata), by group, version and kind.
func ocmSchemas(t *testing.T) map[schema.GroupVersionKind]ocmSchema {
	t.Helper()
	out := map[schema.GroupVersionKind]ocmSchema{}
	for _, c := range upstreamCRDs {
		crd := readCRD(t, filepath.Join("testdata", "ocm-v0.19.0", c.upstream))
		for _, v := range crd.Spec.Versions {
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				t.Fatal(err)
			}
			structural, err := structuralschema.NewStructural(internal)
			if err != nil {
				t.Fatalf("%s %s: %v", crd.Name, v.Name, err)
			}
			validator, _, err := apiservervalidation.NewSchemaValidator(internal)
			if err != nil {
				t.Fatalf("%s %s: %v", crd.Name, v.Name, err)
			}
			out[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = ocmSchema{structural, validator}
		}
	}
	return out
}

// TestConformanceCorpusIsOCM keeps the conformance corpus honest: every object
// of conformance/corpus of a kind OCM v0.19 serves, and every Policy template
// of such a kind, passes OCM's own CRD schema
// (types, enums, patterns, required fields) with no field OCM's API server
// would prune, so the corpus asks fleetpolicy for nothing OCM refuses. The
// corpus's objects of OCM's cluster API (Placement, ManagedClusterSetBinding)
// are checked by the API server in conformancetest, with the same CRDs OCM
// ships.
func TestConformanceCorpusIsOCM(t *testing.T) {
	root := testkit.RepoRoot(t)
	files, err := localplane.ManifestFiles(filepath.Join(root, "conformance", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	schemas := ocmSchemas(t)
	checked := map[string]int{}
	check := func(name string, obj *unstructured.Unstructured) {
		s, ok := schemas[obj.GroupVersionKind()]
		if !ok {
			return
		}
		// As OCM's API server: default, prune (reporting what it prunes),
		// validate.
		structuraldefaulting.Default(obj.Object, s.structural)
		content := obj.DeepCopy().Object
		if unknown := pruning.PruneWithOptions(content, s.structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}); len(unknown) > 0 {
			t.Errorf("%s: OCM v0.19's CRD has no field %v", name, unknown)
		}
		for _, e := range apiservervalidation.ValidateCustomResource(nil, obj.Object, s.validator) {
			t.Errorf("%s: OCM v0.19's CRD refuses it: %v", name, e)
		}
		checked[obj.GetKind()]++
	}
	for _, f := range files {
		objs, err := localplane.ReadManifestFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			name := filepath.Base(f) + ": " + obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
			check(name, obj)
			// A Policy's templates are objects the spoke creates, with the
			// Policy's remediationAction written on as OCM's framework add-on
			// writes it: each must pass its kind's CRD there.
			action, _, _ := unstructured.NestedString(obj.Object, "spec", "remediationAction")
			templates, _, _ := unstructured.NestedSlice(obj.Object, "spec", "policy-templates")
			for i, tmpl := range templates {
				def, _, _ := unstructured.NestedMap(tmpl.(map[string]any), "objectDefinition")
				replication.InheritRemediationAction(policyv1.RemediationAction(action), def)
				check(fmt.Sprintf("%s spec.policy-templates[%d]", name, i), &unstructured.Unstructured{Object: def})
			}
		}
	}
	for _, kind := range []string{"Policy", "PlacementBinding", "PolicySet", "PlacementRule", "ConfigurationPolicy", "OperatorPolicy"} {
		if checked[kind] == 0 {
			t.Errorf("the corpus holds no %s", kind)
		}
	}
}
