package placement

import (
	"errors"
	"fmt"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// CELPolicy is the document a CEL placement policy is: one YAML (or JSON)
// document per data entry of a ConfigMap labelled
// fleetpolicy.io/placement-policy: cel. Unknown fields are errors.
type CELPolicy struct {
	// When, a bool expression over object, limits the policy to the
	// resources it is true for. Empty means every resource.
	When string `json:"when,omitempty"`
	// Variables are evaluated once per resource, in order, over object and
	// the variables before them; later expressions read them as
	// variables.<name>.
	Variables []CELVariable `json:"variables,omitempty"`
	// Match are the conditions a cluster must all meet to be selected: bool
	// expressions over object, variables and cluster ({"name": ..., "labels":
	// {...}, "claims": {...}}). When given, the policy sets
	// placement.fleetpolicy.io/clusters to the selected clusters.
	Match []CELCondition `json:"match,omitempty"`
	// Errors are bool expressions over object, variables and selected (the
	// sorted names of the clusters Match selects; every cluster when there is
	// no Match): each one that is true adds its message to the errors, which
	// deny the resource.
	Errors []CELCondition `json:"errors,omitempty"`
	// Annotations maps an annotation to a string expression over object,
	// variables and selected giving its value.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// CELVariable is a named expression.
type CELVariable struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// CELCondition is a bool expression with its message: Message, or
// MessageExpression (a string expression over the same variables), or by
// default a message quoting the expression. In Match, the message is the
// reason a cluster failing the condition is excluded; in Errors, it is the
// error.
type CELCondition struct {
	Expression        string `json:"expression"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
}

var celIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseCELPolicy reads a CEL policy document and checks its shape (not its
// expressions, which the CEL engine compiles).
func ParseCELPolicy(text string) (CELPolicy, error) {
	var p CELPolicy
	if err := yaml.UnmarshalStrict([]byte(text), &p); err != nil {
		return CELPolicy{}, fmt.Errorf("not a CEL placement policy document: %w", err)
	}
	if len(p.Match) == 0 && len(p.Errors) == 0 && len(p.Annotations) == 0 {
		return CELPolicy{}, errors.New("the policy has no match, errors or annotations: it would decide nothing")
	}
	seen := map[string]bool{}
	for i, v := range p.Variables {
		switch {
		case !celIdentifier.MatchString(v.Name):
			return CELPolicy{}, fmt.Errorf("variables[%d].name: %q is not an identifier", i, v.Name)
		case seen[v.Name]:
			return CELPolicy{}, fmt.Errorf("variables[%d].name: %q is defined twice", i, v.Name)
		case v.Expression == "":
			return CELPolicy{}, fmt.Errorf("variables[%d].expression: required", i)
		}
		seen[v.Name] = true
	}
	for _, part := range []struct {
		field      string
		conditions []CELCondition
	}{{"match", p.Match}, {"errors", p.Errors}} {
		for i, c := range part.conditions {
			field := part.field
			switch {
			case c.Expression == "":
				return CELPolicy{}, fmt.Errorf("%s[%d].expression: required", field, i)
			case c.Message != "" && c.MessageExpression != "":
				return CELPolicy{}, fmt.Errorf("%s[%d]: give message or messageExpression, not both", field, i)
			}
		}
	}
	for _, key := range sortedKeys(p.Annotations) {
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return CELPolicy{}, fmt.Errorf("annotations[%q]: not an annotation name: %s", key, errs[0])
		}
		if p.Annotations[key] == "" {
			return CELPolicy{}, fmt.Errorf("annotations[%q]: the expression is required", key)
		}
		if key == ClustersAnnotation && len(p.Match) > 0 {
			return CELPolicy{}, fmt.Errorf("annotations[%q]: match already sets it", key)
		}
	}
	return p, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
