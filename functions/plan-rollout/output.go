package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	fleetpolicyv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
)

// toKubeObject writes a RolloutPlan as an item, in the field order of the Go
// type, with each wave on one line (flow style, as the API documentation shows
// them). Nodes are built directly: a plan of 10,000 waves would spend more time
// in a round trip through JSON than in planning.
func toKubeObject(plan *fleetpolicyv1alpha1.RolloutPlan) (*fn.KubeObject, error) {
	strategy, err := jsonNode(plan.Spec.Strategy)
	if err != nil {
		return nil, err
	}
	annotations := mapNode()
	for _, k := range slices.Sorted(maps.Keys(plan.Annotations)) {
		annotations.Content = append(annotations.Content, strNode(k), strNode(plan.Annotations[k]))
	}
	metadata := mapNode("name", strNode(plan.Name), "namespace", strNode(plan.Namespace))
	if len(plan.Annotations) > 0 {
		metadata.Content = append(metadata.Content, strNode("annotations"), annotations)
	}

	clusters := seqNode()
	for _, c := range plan.Spec.Clusters {
		n := mapNode("name", strNode(c.Name))
		if c.RemediationAction != "" {
			n.Content = append(n.Content, strNode("remediationAction"), strNode(string(c.RemediationAction)))
		}
		if len(c.EnforcedBy) > 0 {
			n.Content = append(n.Content, strNode("enforcedBy"), stringsNode(c.EnforcedBy))
		}
		if c.Wave != nil {
			n.Content = append(n.Content, strNode("wave"), intNode(int64(*c.Wave)))
		}
		clusters.Content = append(clusters.Content, n)
	}
	waves := seqNode()
	for _, w := range plan.Spec.Waves {
		groups := seqNode()
		for _, g := range w.DecisionGroups {
			n := mapNode()
			if g.Placement != "" {
				n.Content = append(n.Content, strNode("placement"), strNode(g.Placement))
			}
			if g.GroupName != "" {
				n.Content = append(n.Content, strNode("groupName"), strNode(g.GroupName))
			}
			n.Content = append(n.Content, strNode("groupIndex"), intNode(int64(g.GroupIndex)))
			groups.Content = append(groups.Content, n)
		}
		n := mapNode("index", intNode(int64(w.Index)), "clusters", stringsNode(w.Clusters), "decisionGroups", groups,
			"mandatory", boolNode(w.Mandatory), "notBefore", strNode(w.NotBefore.Duration.String()))
		n.Style = yaml.FlowStyle
		waves.Content = append(waves.Content, n)
	}

	root := mapNode(
		"apiVersion", strNode(plan.APIVersion),
		"kind", strNode(plan.Kind),
		"metadata", metadata,
		"spec", mapNode(
			"policyRef", mapNode("name", strNode(plan.Spec.PolicyRef.Name), "namespace", strNode(plan.Spec.PolicyRef.Namespace)),
			"strategy", strategy,
			"clusters", clusters,
			"waves", waves,
		),
	)
	return fn.MoveToKubeObject(yaml.NewRNode(root)), nil
}

// jsonNode is v as a YAML node, through its JSON form, in block style.
func jsonNode(v any) (*yaml.Node, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return krm.NodeFromJSON(raw)
}

// mapNode is a mapping of the given keys and values.
func mapNode(keysAndValues ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	for i := 0; i < len(keysAndValues); i += 2 {
		n.Content = append(n.Content, strNode(keysAndValues[i].(string)), keysAndValues[i+1].(*yaml.Node))
	}
	return n
}

func seqNode() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq} }

// stringsNode is a list of strings, in flow style.
func stringsNode(values []string) *yaml.Node {
	n := seqNode()
	n.Style = yaml.FlowStyle
	for _, v := range values {
		n.Content = append(n.Content, strNode(v))
	}
	return n
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
}

func intNode(i int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.FormatInt(i, 10)}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(b)}
}

// writePlans returns items with the plans written: a plan replaces the spec of
// the RolloutPlan already in items for its Policy (its metadata, annotations
// included, is kept), and is appended otherwise, in order. A second RolloutPlan
// for the same Policy is dropped. A local-config RolloutPlan whose Policy is not
// in the input is dropped as stale; one without local-config is kept, with a
// warning. So is the plan of a Policy that could not be planned because a
// placement it is bound through is not in the input: it may no longer hold.
func (in *inputs) writePlans(items fn.KubeObjects, plans map[objectKey]*fn.KubeObject, order []objectKey) fn.KubeObjects {
	policies := map[objectKey]bool{}
	for _, p := range in.policies {
		policies[objectKey{p.obj.Namespace, p.obj.Name}] = true
	}
	written := map[objectKey]bool{}
	out := make(fn.KubeObjects, 0, len(items)+len(order))
	for _, item := range items {
		if !isRolloutPlan(item) {
			out = append(out, item)
			continue
		}
		key := objectKey{item.GetNamespace(), item.GetName()}
		plan, planned := plans[key]
		switch {
		case written[key]:
			in.results = append(in.results, krm.ObjectResult(item, fn.Info, "", "removed: a duplicate of the RolloutPlan written for Policy "+key.String()))
		case planned:
			out = append(out, withMetadataOf(plan, item))
			written[key] = true
		case in.unplanned[key] && item.IsLocalConfig():
			in.results = append(in.results, krm.ObjectResult(item, fn.Info, "", "removed: Policy "+key.String()+
				" is bound through a placement that is not in the input and cannot be planned"))
		case in.unplanned[key]:
			in.results = append(in.results, krm.ObjectResult(item, fn.Warning, "", "Policy "+key.String()+
				" is bound through a placement that is not in the input and cannot be planned; this plan, which may no longer hold,"+
				" is kept because it is not marked "+fn.KptLocalConfig))
			out = append(out, item)
		case policies[key]:
			out = append(out, item) // not selected
		case item.IsLocalConfig():
			in.results = append(in.results, krm.ObjectResult(item, fn.Info, "", "removed: Policy "+key.String()+" is not in the input"))
		default:
			in.results = append(in.results, krm.ObjectResult(item, fn.Warning, "", "Policy "+key.String()+
				" is not in the input; this plan is kept because it is not marked "+fn.KptLocalConfig))
			out = append(out, item)
		}
	}
	for _, key := range order {
		if !written[key] {
			out = append(out, plans[key])
		}
	}
	return out
}

// withMetadataOf returns plan with the metadata (when it has one) and the
// comments of the item it replaces.
func withMetadataOf(plan, item *fn.KubeObject) *fn.KubeObject {
	rn, old := plan.CopyToResourceNode(), item.CopyToResourceNode()
	rn.YNode().HeadComment, rn.YNode().FootComment = old.YNode().HeadComment, old.YNode().FootComment
	if newKeys, oldKeys := rn.YNode().Content, old.YNode().Content; len(newKeys) > 0 && len(oldKeys) > 0 {
		newKeys[0].HeadComment = oldKeys[0].HeadComment // a comment above the object sits on its first key
	}
	if metadata := old.Field("metadata"); metadata != nil && metadata.Value.YNode().Kind == yaml.MappingNode {
		rn.Field("metadata").Value.SetYNode(metadata.Value.YNode())
	}
	return fn.MoveToKubeObject(rn)
}

// maxTableWaves caps the waves the wave table lists.
const maxTableWaves = 12

// maxTableClusters caps the cluster names one row of the wave table lists.
const maxTableClusters = 3

// waveTable summarises a plan: a line about the rollout, then one row per wave.
func waveTable(plan *fleetpolicyv1alpha1.RolloutPlan) string {
	spec := plan.Spec
	var enforced, inform int
	for _, c := range spec.Clusters {
		if c.Wave != nil {
			enforced++
		} else {
			inform++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rollout plan (%s): ", spec.Strategy.Type)
	switch {
	case len(spec.Clusters) == 0:
		b.WriteString("bound to no cluster")
	case enforced == 0:
		fmt.Fprintf(&b, "%s stay inform, no wave", count(inform, "cluster"))
	default:
		fmt.Fprintf(&b, "%s enforced in %s", count(enforced, "cluster"), count(len(spec.Waves), "wave"))
		if inform > 0 {
			fmt.Fprintf(&b, ", %s stay inform", count(inform, "cluster"))
		}
	}
	if len(spec.Waves) == 0 {
		return b.String()
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "wave\tnotBefore\tclusters\tdecision groups")
	for i, w := range spec.Waves {
		if i == maxTableWaves-1 && len(spec.Waves) > maxTableWaves {
			last := spec.Waves[len(spec.Waves)-1]
			fmt.Fprintf(tw, "...\t\t\t%d more waves, the last (%d) not before %s\n", len(spec.Waves)-i, last.Index, last.NotBefore.Duration)
			break
		}
		var groups []string
		for _, g := range w.DecisionGroups {
			groups = append(groups, describeGroup(g))
		}
		row := strings.Join(groups, ", ")
		if w.Mandatory {
			row += " (mandatory)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", w.Index, w.NotBefore.Duration, listClusters(w.Clusters), row)
	}
	_ = tw.Flush()
	return strings.TrimRight(b.String(), "\n")
}

func describeGroup(g fleetpolicyv1alpha1.DecisionGroupRef) string {
	s := fmt.Sprintf("%s/%d", g.Placement, g.GroupIndex)
	if g.GroupName != "" {
		s += " " + g.GroupName
	}
	return s
}

// listClusters writes the number of clusters and the first names.
func listClusters(clusters []string) string {
	shown := clusters[:min(len(clusters), maxTableClusters)]
	s := fmt.Sprintf("%d (%s", len(clusters), strings.Join(shown, ", "))
	if more := len(clusters) - len(shown); more > 0 {
		s += fmt.Sprintf(", +%d", more)
	}
	return s + ")"
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
