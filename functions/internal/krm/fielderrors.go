package krm

import (
	"errors"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FieldResult is the result of field error e about obj: e's path is the
// result's field and e's body (its type, bad value and detail, as
// field.Error.ErrorBody writes them) its message.
func FieldResult(obj *fn.KubeObject, severity fn.Severity, e *field.Error) *fn.Result {
	return ObjectResult(obj, severity, e.Field, e.ErrorBody())
}

// ErrorResults are the results of err about obj: a FieldResult per field
// error err holds (a *field.Error, a field.ErrorList's aggregate, errors
// joined by errors.Join or a utilerrors.Aggregate, at any depth) and a result
// with the text of each other error. A nil err has none.
func ErrorResults(obj *fn.KubeObject, severity fn.Severity, err error) fn.Results {
	var results fn.Results
	for _, e := range flatten(err) {
		var fieldErr *field.Error
		if errors.As(e, &fieldErr) {
			results = append(results, FieldResult(obj, severity, fieldErr))
			continue
		}
		results = append(results, ObjectResult(obj, severity, "", e.Error()))
	}
	return results
}

// FieldResults are the FieldResults of errs about obj.
func FieldResults(obj *fn.KubeObject, severity fn.Severity, errs field.ErrorList) fn.Results {
	results := make(fn.Results, len(errs))
	for i, e := range errs {
		results[i] = FieldResult(obj, severity, e)
	}
	return results
}

// flatten returns the errors err joins (errors.Join, utilerrors.Aggregate,
// also wrapped), each flattened in turn; err alone when it joins none.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	var joined []error
	switch e := err.(type) {
	case utilerrors.Aggregate:
		joined = e.Errors()
	case interface{ Unwrap() []error }:
		joined = e.Unwrap()
	case interface{ Unwrap() error }:
		// An error that wraps a join (fmt.Errorf("...: %w", aggregate)) is
		// the errors joined: the object is named by the results already.
		if joins(e.Unwrap()) {
			return flatten(e.Unwrap())
		}
		return []error{err}
	default:
		return []error{err}
	}
	var out []error
	for _, e := range joined {
		out = append(out, flatten(e)...)
	}
	return out
}

// joins reports whether err is, or wraps, errors joined by errors.Join or in
// a utilerrors.Aggregate.
func joins(err error) bool {
	switch e := err.(type) {
	case utilerrors.Aggregate, interface{ Unwrap() []error }:
		return true
	case interface{ Unwrap() error }:
		return joins(e.Unwrap())
	}
	return false
}

// Unreadable is the error result of an item that cannot be decoded as its
// kind: "cannot be read: " and why, naming the field when err is (or wraps) a
// *field.Error, whose detail is then the why.
func Unreadable(obj *fn.KubeObject, err error) *fn.Result {
	var fieldErr *field.Error
	if errors.As(err, &fieldErr) {
		return ObjectResult(obj, fn.Error, fieldErr.Field, "cannot be read: "+fieldErr.Detail)
	}
	return ObjectResult(obj, fn.Error, "", "cannot be read: "+err.Error())
}
