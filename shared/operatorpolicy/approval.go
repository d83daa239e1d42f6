package operatorpolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// ApprovalDecision says whether to approve an InstallPlan, and why.
type ApprovalDecision struct {
	// Approve is true when the caller should set spec.approved to true.
	Approve bool
	// Reason explains the decision, naming the InstallPlan.
	Reason string
	// Unapproved lists, sorted, the CSVs of the plan no enforced policy allows.
	Unapproved []string
}

// DecideInstallPlanApproval decides an InstallPlan against every OperatorPolicy
// (normalised) and every Subscription the caller knows; only those in the plan's
// namespace count. The plan is approved only when it is unapproved, in phase
// RequiresApproval, and every CSV it lists in spec.clusterServiceVersionNames or
// status.bundleLookups is approved by some policy that enforces, is not removing
// the operator, and manages the CSV's package.
//
// A CSV's package is the olm.package packageName of its bundle lookup; when the
// plan has no lookup for it, the package of the Subscription whose
// status.currentCSV it is. A policy manages a package when its
// spec.subscription.name is the package. A policy approves a CSV it lists by
// name; with all CSVs allowed it approves any CSV when its approval is
// Automatic, and with Manual only the package's first install (its
// Subscription has no status.installedCSV).
func DecideInstallPlanApproval(plan *operatorsv1alpha1.InstallPlan, policies []Policy, subscriptions []operatorsv1alpha1.Subscription) ApprovalDecision {
	if plan == nil {
		return ApprovalDecision{Reason: "there is no InstallPlan"}
	}
	ref := "InstallPlan " + objectRef(plan.Namespace, plan.Name)
	switch {
	case plan.Spec.Approved:
		return ApprovalDecision{Reason: ref + " is already approved"}
	case plan.Status.Phase != operatorsv1alpha1.InstallPlanPhaseRequiresApproval:
		return ApprovalDecision{Reason: fmt.Sprintf("%s is in phase %q, not %s", ref, plan.Status.Phase, operatorsv1alpha1.InstallPlanPhaseRequiresApproval)}
	}

	packages, problems := csvPackages(plan, subscriptions)
	if len(packages) == 0 {
		return ApprovalDecision{Reason: ref + " names no ClusterServiceVersion"}
	}
	csvs := make([]string, 0, len(packages))
	for csv := range packages {
		csvs = append(csvs, csv)
	}
	slices.Sort(csvs)

	var unapproved, approvers []string
	for _, csv := range csvs {
		pkg := packages[csv]
		approver := ""
		if csv != "" {
			approver = approverOf(policies, plan.Namespace, pkg, csv, subscriptions)
		}
		if approver == "" {
			unapproved = append(unapproved, csv)
			switch {
			case csv == "":
				problems = append(problems, "a bundle lookup has no identifier")
			case pkg == "":
				problems = append(problems, csv+" has no known package")
			default:
				problems = append(problems, fmt.Sprintf("%s (package %s) is allowed by no enforced OperatorPolicy", csv, pkg))
			}
			continue
		}
		approvers = append(approvers, approver)
	}
	if len(unapproved) > 0 {
		return ApprovalDecision{Reason: fmt.Sprintf("%s is not approved: %s", ref, strings.Join(problems, "; ")), Unapproved: unapproved}
	}
	slices.Sort(approvers)
	return ApprovalDecision{
		Approve: true,
		Reason: fmt.Sprintf("%s is approved: %s allowed by OperatorPolicy %s", ref,
			strings.Join(csvs, ", "), strings.Join(slices.Compact(approvers), ", ")),
	}
}

// csvPackages maps every CSV of the plan to its package ("" when unknown) and
// reports bundle lookups whose properties cannot be read.
func csvPackages(plan *operatorsv1alpha1.InstallPlan, subscriptions []operatorsv1alpha1.Subscription) (map[string]string, []string) {
	packages := map[string]string{}
	var problems []string
	for _, csv := range plan.Spec.ClusterServiceVersionNames {
		packages[csv] = ""
	}
	for i, lookup := range plan.Status.BundleLookups {
		pkg, err := BundlePackage(lookup.Properties)
		if err != nil {
			problems = append(problems, fmt.Sprintf("status.bundleLookups[%d].properties: %v", i, err))
		}
		if pkg != "" || packages[lookup.Identifier] == "" {
			packages[lookup.Identifier] = pkg
		}
	}
	for csv, pkg := range packages {
		if pkg != "" {
			continue
		}
		for i := range subscriptions {
			s := &subscriptions[i]
			if s.Namespace == plan.Namespace && s.Spec != nil && s.Status.CurrentCSV == csv {
				packages[csv] = s.Spec.Package
				break
			}
		}
	}
	return packages, problems
}

// approverOf is the first policy that approves csv of package pkg, as
// namespace/name; "" when none does.
func approverOf(policies []Policy, namespace, pkg, csv string, subscriptions []operatorsv1alpha1.Subscription) string {
	for _, p := range policies {
		if approves(p, namespace, pkg, csv, subscriptions) {
			return p.Ref()
		}
	}
	return ""
}

func approves(p Policy, namespace, pkg, csv string, subscriptions []operatorsv1alpha1.Subscription) bool {
	if !p.Enforce || p.Remove || pkg == "" || p.Subscription.Namespace != namespace || p.Subscription.Package != pkg {
		return false
	}
	switch {
	case p.Allowed.Lists(csv):
		return true
	case !p.Allowed.All:
		return false
	case p.Approval == operatorsv1alpha1.ApprovalAutomatic:
		return true
	}
	for i := range subscriptions {
		s := &subscriptions[i]
		if s.Namespace == namespace && s.Spec != nil && s.Spec.Package == pkg && s.Status.InstalledCSV != "" {
			return false
		}
	}
	return true
}

// propertyOLMPackage is the bundle property type that names the package.
const propertyOLMPackage = "olm.package"

// BundlePackage returns the packageName of the olm.package property in a bundle
// lookup's properties JSON, "" when there is none. Malformed JSON, a malformed
// olm.package value or two olm.package properties naming different packages
// are errors.
func BundlePackage(properties string) (string, error) {
	if strings.TrimSpace(properties) == "" {
		return "", nil
	}
	var doc struct {
		Properties []struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(properties), &doc); err != nil {
		return "", fmt.Errorf("not a properties document: %w", err)
	}
	pkg := ""
	for _, prop := range doc.Properties {
		if prop.Type != propertyOLMPackage {
			continue
		}
		var value struct {
			PackageName string `json:"packageName"`
		}
		if err := json.Unmarshal(prop.Value, &value); err != nil {
			return "", fmt.Errorf("%s value: %w", propertyOLMPackage, err)
		}
		if value.PackageName == "" {
			return "", errors.New(propertyOLMPackage + " value has no packageName")
		}
		if pkg != "" && pkg != value.PackageName {
			return "", fmt.Errorf("%s names two packages (%s and %s)", propertyOLMPackage, pkg, value.PackageName)
		}
		pkg = value.PackageName
	}
	return pkg, nil
}
