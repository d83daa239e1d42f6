package dependency

import (
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// ClusterPolicies reads the Policies of a managed cluster's namespace, where
// they are named by their replicated names ("<namespace>.<name>").
type ClusterPolicies struct {
	// Get reads the policy of that name; nil, and no error, when there is none.
	Get func(name string) (*policyv1.Policy, error)
	// List reads every policy of the namespace.
	List func() ([]policyv1.Policy, error)
}

// CycleThrough returns the path of a dependency cycle through p, a policy of
// a managed cluster's namespace, or through one of the dependencies p
// declares (on the policy or on its templates), as Cycle.Path renders it; ""
// when p is on no cycle. It walks the graph of the policies p reaches through its
// dependencies and reads only those (Get), unless a dependency names a
// template: the template's policy is then found among all of them (List, read
// at most once). A dependency on a policy or template that does not exist
// leads nowhere. An error of Get or List is returned as it is. p and what the
// reads return are not modified.
func CycleThrough(p *policyv1.Policy, from ClusterPolicies) (string, error) {
	var owners map[Ref]string // template -> policy, built when first needed
	ownerOf := func(target Ref) (string, error) {
		if target.Group == policyGroup && target.Kind == kindPolicy {
			return target.Name, nil
		}
		if owners == nil {
			all, err := from.List()
			if err != nil {
				return "", err
			}
			owners = templateOwners(all)
		}
		return owners[target], nil
	}
	reached := []*policyv1.Policy{p}
	seen := map[string]bool{p.Name: true}
	for next := 0; next < len(reached); next++ {
		q := reached[next]
		for i := range q.Spec.PolicyTemplates {
			reqs, _ := Requirements(q, i, nil)
			for _, req := range reqs {
				name, err := ownerOf(req.Target)
				if err != nil {
					return "", err
				}
				if name == "" || seen[name] {
					continue
				}
				seen[name] = true
				d, err := from.Get(name)
				if err != nil {
					return "", err
				}
				if d != nil {
					reached = append(reached, d)
				}
			}
		}
	}
	// In the cluster namespace, policies are named by their replicated names:
	// the graph must not prefix them with the namespace again.
	graphed := make([]*policyv1.Policy, len(reached))
	for i, q := range reached {
		c := *q
		c.Namespace = ""
		graphed[i] = &c
	}
	// A cycle is p's when it passes through p itself or through a dependency
	// p declared: two of p's templates' dependencies may close a cycle among
	// templates that never passes through a Policy.
	self := ObjectRef(policyv1.GroupVersion.String(), kindPolicy, "", p.Name)
	for _, cycle := range Build(graphed, nil).Cycles() {
		for _, e := range cycle.Edges {
			if e.From == self || (e.declared() && e.Policy.Name == p.Name) {
				return cycle.Path(), nil
			}
		}
	}
	return "", nil
}

// templateOwners maps the templates of the policies, by identity, to the
// name of the policy holding them.
func templateOwners(policies []policyv1.Policy) map[Ref]string {
	owners := map[Ref]string{}
	for _, q := range policies {
		for _, tmpl := range q.Spec.PolicyTemplates {
			if ref, ok := templateIdentity(tmpl); ok {
				owners[ref] = q.Name
			}
		}
	}
	return owners
}
