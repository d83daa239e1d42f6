package policyreport

import (
	"cmp"
	"slices"
	"time"

	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// Source is the Report's and each result's source: the engine Policy Reporter
// groups results by.
const Source = "fleetpolicy"

// Name is the name of the Report in each cluster namespace.
const Name = "fleetpolicy"

// ManagedByLabel marks the Reports the hub writes (value Source): the hub
// reads, updates and deletes only Reports that carry it.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// OCM's policy annotations, read into each result.
const (
	annotationStandards  = "policy.open-cluster-management.io/standards"
	annotationCategories = "policy.open-cluster-management.io/categories"
	annotationControls   = "policy.open-cluster-management.io/controls"
)

// ResultOf is the OpenReports result of a compliance state, and whether it has
// one: Compliant pass, NonCompliant fail, Pending skip; none for an unknown
// state (the cluster has not reported).
func ResultOf(state policyv1.ComplianceState) (openreportsv1alpha1.Result, bool) {
	switch state {
	case policyv1.Compliant:
		return "pass", true
	case policyv1.NonCompliant:
		return "fail", true
	case policyv1.Pending:
		return "skip", true
	}
	return "", false
}

// message is a result's message for a policy's compliance on cluster.
func message(state policyv1.ComplianceState, cluster string) string {
	switch state {
	case policyv1.Compliant:
		return "compliant on " + cluster
	case policyv1.NonCompliant:
		return "not compliant on " + cluster
	}
	return "pending on " + cluster + ": not evaluated until its dependencies are met"
}

// ForCluster returns the Report of cluster (in the cluster's namespace, which
// has its name) from roots: the root policies, of any namespace, whose
// status.status[] has an entry for the cluster (others are skipped). previous
// is the stored Report (nil: none); its timestamps are kept for results that
// did not change. now stamps the others.
func ForCluster(cluster string, roots []*policyv1.Policy, previous *openreportsv1alpha1.Report, now time.Time) *openreportsv1alpha1.Report {
	before := map[string]openreportsv1alpha1.ReportResult{}
	if previous != nil {
		for _, r := range previous.Results {
			before[r.Policy] = r
		}
	}
	report := &openreportsv1alpha1.Report{
		TypeMeta: metav1.TypeMeta{APIVersion: openreportsv1alpha1.SchemeGroupVersion.String(), Kind: "Report"},
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: cluster,
			Labels: map[string]string{ManagedByLabel: Source}},
		Source: Source,
		Scope:  &corev1.ObjectReference{APIVersion: "cluster.open-cluster-management.io/v1", Kind: "ManagedCluster", Name: cluster},
	}
	for _, root := range roots {
		if root == nil || replication.IsReplica(root) {
			continue
		}
		i := slices.IndexFunc(root.Status.Status, func(e *policyv1.CompliancePerClusterStatus) bool {
			return e != nil && e.ClusterName == cluster
		})
		if i < 0 {
			continue
		}
		entry := root.Status.Status[i]
		outcome, ok := ResultOf(entry.ComplianceState)
		if !ok {
			continue
		}
		result := openreportsv1alpha1.ReportResult{
			Source:      Source,
			Policy:      root.Namespace + "/" + root.Name,
			Category:    root.Annotations[annotationCategories],
			Result:      outcome,
			Description: message(entry.ComplianceState, cluster),
			Subjects: []corev1.ObjectReference{{APIVersion: policyv1.GroupVersion.String(), Kind: "Policy",
				Namespace: cluster, Name: replication.Name(root.Namespace, root.Name)}},
			Properties: properties(root, entry),
		}
		if was, ok := before[result.Policy]; ok && was.Result == result.Result && was.Description == result.Description {
			result.Timestamp = was.Timestamp
		} else {
			result.Timestamp = metav1.Timestamp{Seconds: now.Unix()}
		}
		report.Results = append(report.Results, result)
		count(&report.Summary, outcome)
	}
	slices.SortFunc(report.Results, func(a, b openreportsv1alpha1.ReportResult) int { return cmp.Compare(a.Policy, b.Policy) })
	return report
}

// properties are a result's properties: OCM's standards and controls
// annotations and the cluster's rollout status, those that are set; nil when
// none is.
func properties(root *policyv1.Policy, entry *policyv1.CompliancePerClusterStatus) map[string]string {
	out := map[string]string{}
	if v := root.Annotations[annotationStandards]; v != "" {
		out["standards"] = v
	}
	if v := root.Annotations[annotationControls]; v != "" {
		out["controls"] = v
	}
	if entry.RolloutStatus != "" {
		out["rolloutStatus"] = string(entry.RolloutStatus)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func count(s *openreportsv1alpha1.ReportSummary, r openreportsv1alpha1.Result) {
	switch r {
	case "pass":
		s.Pass++
	case "fail":
		s.Fail++
	case "skip":
		s.Skip++
	}
}

// Equal reports whether stored already says what desired says: the same
// source, scope, summary, results and managed-by label (other metadata, such as
// labels others add, is not compared).
func Equal(stored, desired *openreportsv1alpha1.Report) bool {
	return stored.Source == desired.Source &&
		stored.Labels[ManagedByLabel] == desired.Labels[ManagedByLabel] &&
		equality.Semantic.DeepEqual(stored.Scope, desired.Scope) &&
		stored.Summary == desired.Summary &&
		equality.Semantic.DeepEqual(stored.Results, desired.Results)
}
