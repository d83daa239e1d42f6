package placement

import (
	"context"
	"fmt"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/open-policy-agent/opa/v1/ast"
)

// Engine compiles the placement policies of one language and keeps the cluster
// inventory in the form its programs read. A Program is compiled once per
// policy text; SetInventory changes what every program of the engine sees from
// then on, without compiling anything again. Both are safe to call while
// programs evaluate.
type Engine interface {
	// Compile prepares one policy. The error, if any, says what in the text is
	// wrong.
	Compile(ctx context.Context, id PolicyID, text string) (Program, error)
	// SetInventory makes inv the inventory. changed names the clusters added,
	// changed or removed since the previous call; nil means all of them.
	SetInventory(ctx context.Context, inv *Inventory, changed []string) error
}

// Program is one compiled placement policy. It is safe for concurrent use.
type Program interface {
	// Evaluate evaluates the policy on the resource. With explain set, the
	// verdict also carries the reasons for the clusters the policy excludes.
	// It stops with ctx's error when ctx is done. The verdict may be shared
	// with other evaluations: callers must not change it.
	Evaluate(ctx context.Context, r *Resource, explain bool) (Verdict, error)
}

// Verdict is what one policy says about a resource.
type Verdict struct {
	// Annotations are the annotations the policy sets; the ClustersAnnotation
	// among them restricts where the resource goes.
	Annotations map[string]string
	// Errors are the policy's messages; any message denies the resource.
	Errors []string
	// Excluded holds, when explaining, the policy's reasons for the clusters it
	// leaves out of its ClustersAnnotation.
	Excluded map[string][]string
}

// Resource is a resource under evaluation, in its JSON form (as decoded by
// encoding/json), with the forms the engines read made once and shared by every
// policy. A Resource belongs to one evaluation: it is not safe for concurrent
// use.
type Resource struct {
	object map[string]any
	rego   ast.Value
	cel    ref.Val
}

// NewResource wraps a resource's JSON form.
func NewResource(object map[string]any) *Resource { return &Resource{object: object} }

// regoInput is the resource as Rego's input document.
func (r *Resource) regoInput() (ast.Value, error) {
	if r.rego == nil {
		v, err := ast.InterfaceToValue(r.object)
		if err != nil {
			return nil, fmt.Errorf("the resource cannot be read as Rego input: %w", err)
		}
		r.rego = v
	}
	return r.rego, nil
}

// celObject is the resource as CEL's object variable.
func (r *Resource) celObject() ref.Val {
	if r.cel == nil {
		r.cel = types.DefaultTypeAdapter.NativeToValue(r.object)
	}
	return r.cel
}

// annotations are the resource's metadata.annotations that are strings.
func (r *Resource) annotations() map[string]string {
	md, _ := r.object["metadata"].(map[string]any)
	raw, _ := md["annotations"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}
