package hub

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

var policiesResource = schema.GroupResource{Group: "policy.open-cluster-management.io", Resource: "policies"}

// TestWriteFailureRefusal holds the line between a refusal, named at once,
// and a failure that may pass by itself, named once it persists.
func TestWriteFailureRefusal(t *testing.T) {
	tooLarge := apierrors.NewRequestEntityTooLargeError("limit is 3145728")
	for _, tc := range []struct {
		err     error
		refusal bool
		reason  string
	}{
		{tooLarge, true, "RequestEntityTooLarge"},
		{fmt.Errorf("wrapped: %w", tooLarge), true, "RequestEntityTooLarge"},
		{apierrors.NewForbidden(policiesResource, "ns.p", errors.New("denied")), true, "Forbidden"},
		{apierrors.NewInvalid(policyv1.GroupVersion.WithKind("Policy").GroupKind(), "ns.p", nil), true, "Invalid"},
		{apierrors.NewBadRequest("bad"), true, "BadRequest"},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "cluster-x"), true, "NotFound"},
		{apierrors.NewAlreadyExists(policiesResource, "ns.p"), true, "AlreadyExists"},
		{apierrors.NewConflict(policiesResource, "ns.p", errors.New("changed")), false, "Conflict"},
		{apierrors.NewTooManyRequests("slow down", 1), false, "TooManyRequests"},
		{apierrors.NewUnauthorized("expired"), false, "Unauthorized"},
		{apierrors.NewInternalError(errors.New("failed calling webhook")), false, "InternalError"},
		{apierrors.NewServiceUnavailable("busy"), false, "ServiceUnavailable"},
		{apierrors.NewTimeoutError("slow", 1), false, "Timeout"},
		// etcd's refusal of a request over its limit, as the API server
		// answers it: a 500 with no reason.
		{&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500,
			Message: "etcdserver: request is too large"}}, false, "InternalError"},
		{errors.New("connection refused"), false, "WriteFailed"},
	} {
		f := writeFailure{cluster: "c", verb: verbCreate, err: tc.err}
		if got := f.refusal(); got != tc.refusal {
			t.Errorf("%v: refusal %v, want %v", tc.err, got, tc.refusal)
		}
		if got := f.reason(); got != tc.reason {
			t.Errorf("%v: reason %q, want %q", tc.err, got, tc.reason)
		}
	}
}

// TestFailureStreaks: a refusal is named at once; any other failure once the
// cluster's write failed failureStreakReported reconciles in a row; a
// reconcile without it starts the count again; roots are counted apart and
// forgotten.
func TestFailureStreaks(t *testing.T) {
	s := newFailureStreaks()
	root, other := types.NamespacedName{Namespace: "ns", Name: "root"}, types.NamespacedName{Namespace: "ns", Name: "other"}
	refused := writeFailure{cluster: "a", verb: verbCreate, err: apierrors.NewForbidden(policiesResource, "ns.root", errors.New("denied"))}
	down := writeFailure{cluster: "b", verb: verbUpdate, err: apierrors.NewInternalError(errors.New("failed calling webhook"))}
	conflict := writeFailure{cluster: "c", verb: verbUpdate, err: apierrors.NewConflict(policiesResource, "ns.root", errors.New("changed"))}
	clusters := func(fs []writeFailure) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.cluster)
		}
		return strings.Join(out, ",")
	}
	for i, tc := range []struct {
		root     types.NamespacedName
		failures []writeFailure
		want     string
	}{
		{root, []writeFailure{refused, down, conflict}, "a"},
		{other, []writeFailure{down}, ""},
		{root, []writeFailure{refused, down, conflict}, "a"},
		{root, []writeFailure{down, conflict}, "b,c"},
		{root, []writeFailure{down}, "b"},
		{root, nil, ""},
		{root, []writeFailure{down, conflict}, ""}, // c starts again; so does b
		{root, []writeFailure{down}, ""},
		{root, []writeFailure{down}, "b"},
		{other, []writeFailure{down}, ""},
		{other, []writeFailure{down}, "b"},
	} {
		if got := clusters(s.reported(tc.root, append([]writeFailure(nil), tc.failures...))); got != tc.want {
			t.Errorf("reconcile %d of %s: named %q, want %q", i, tc.root, got, tc.want)
		}
	}
	s.forget(other)
	if got := clusters(s.reported(other, []writeFailure{down})); got != "" {
		t.Errorf("after forget: named %q", got)
	}
	s.reported(root, nil)
	s.reported(other, nil)
	if len(s.byRoot) != 0 {
		t.Errorf("roots without failures are kept: %v", s.byRoot)
	}
}

// TestReplicasFailedCondition: the message names the first failuresShown
// clusters in order, each with its write, the API server's reason and a
// bounded message, and counts the rest; the reason is the API server's when
// all failures share it.
func TestReplicasFailedCondition(t *testing.T) {
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "root", Generation: 4}}
	if cond := replicasFailedCondition(root, nil, 3); cond != nil {
		t.Errorf("no failure: %+v, want none", cond)
	}
	var failures []writeFailure
	for i := 2500; i > 0; i-- {
		failures = append(failures, writeFailure{cluster: fmt.Sprintf("cluster-%04d", i), verb: verbCreate,
			err: apierrors.NewRequestEntityTooLargeError("limit is 3145728")})
	}
	cond := replicasFailedCondition(root, failures, 3000)
	want := "the API server did not take the replica of 2500 of 3000 cluster(s): " +
		"cluster-0001 (create, RequestEntityTooLarge): Request entity too large: limit is 3145728; "
	if cond.Type != ConditionReplicasFailed || cond.Status != metav1.ConditionTrue || cond.Reason != "RequestEntityTooLarge" ||
		cond.ObservedGeneration != 4 || !strings.HasPrefix(cond.Message, want) ||
		!strings.Contains(cond.Message, "cluster-0010 (create") || strings.Contains(cond.Message, "cluster-0011") ||
		!strings.HasSuffix(cond.Message, "; and 2490 more") {
		t.Errorf("2,500 too large: %+v", cond)
	}

	long := writeFailure{cluster: "b", verb: verbUpdate, err: apierrors.NewBadRequest(strings.Repeat("é", 1000))}
	gone := writeFailure{cluster: "a", verb: verbDelete, err: apierrors.NewForbidden(policiesResource, "ns.root", errors.New("denied"))}
	cond = replicasFailedCondition(root, []writeFailure{long, gone}, 1)
	if cond.Reason != reasonMultipleReasons || !strings.HasPrefix(cond.Message, "the API server did not take the replica of 2 of 2 cluster(s): a (delete, Forbidden): ") ||
		!strings.Contains(cond.Message, "; b (update, BadRequest): "+strings.Repeat("é", failureMessageRunes)+"…") ||
		len(cond.Message) > 2000 {
		t.Errorf("two reasons: %+v", cond)
	}
	if shown, n := notWritten([]writeFailure{gone, long}); n != 1 || strings.Join(shown, ",") != "b" {
		t.Errorf("notWritten: %v, %d; want the update only", shown, n)
	}
}
