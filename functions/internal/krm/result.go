package krm

import (
	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// ObjectResult is a result about obj and, when field is not empty, about that
// field of it (a path such as spec.dependencies[0].compliance). The resourceRef
// and file come from obj and its path and index annotations.
// A nil obj gives a result about no object.
func ObjectResult(obj *fn.KubeObject, severity fn.Severity, field, message string) *fn.Result {
	r := &fn.Result{Message: message, Severity: severity}
	if obj == nil {
		return r
	}
	r.ResourceRef = &fn.ResourceRef{
		APIVersion: obj.GetAPIVersion(),
		Kind:       obj.GetKind(),
		Name:       obj.GetName(),
		Namespace:  obj.GetNamespace(),
	}
	if path := obj.PathAnnotation(); path != "" {
		r.File = &fn.File{Path: path, Index: max(obj.IndexAnnotation(), 0)}
	}
	if field != "" {
		r.Field = &fn.Field{Path: field}
	}
	return r
}
