package console

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/console/view"
	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// pageNames are the page templates: each defines "main", inside "layout".
var pageNames = []string{"fleet", "policy", "replica", "rollout", "placement", "cluster", "login", "error"}

var funcs = template.FuncMap{
	"state": func(s any) string { return view.State(policyv1.ComplianceState(fmt.Sprint(s))) },
	"stateClass": func(s any) string {
		return "s-" + strings.ToLower(view.State(policyv1.ComplianceState(fmt.Sprint(s))))
	},
	"rolloutClass": func(s any) string { return "r-" + strings.ToLower(fmt.Sprint(s)) },
	"abbrev": func(s policyv1.ComplianceState) string {
		switch s {
		case policyv1.NonCompliant:
			return "NC"
		case policyv1.Pending:
			return "P"
		case policyv1.Compliant:
			return "C"
		}
		return "?"
	},
	"time": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		case metav1.Time:
			return v.UTC().Format("2006-01-02 15:04:05Z")
		}
		return fmt.Sprint(t)
	},
	"dur":  func(d time.Duration) string { return d.Round(time.Second).String() },
	"join": strings.Join,
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return m
	},
	"deref": func(b *bool) bool { return b != nil && *b },
}

func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// pager is a Paging with the links to the previous and next page.
type pager struct {
	view.Paging
	Prev, Next string
}

func newPager(r *request, param string, p view.Paging) pager {
	link := func(n int) string {
		q := r.URL.Query()
		q.Set(param, strconv.Itoa(n))
		q.Del("export")
		q.Del("table")
		return r.URL.Path + "?" + q.Encode()
	}
	out := pager{Paging: p}
	if p.Page > 1 {
		out.Prev = link(p.Page - 1)
	}
	if p.Page < p.Pages {
		out.Next = link(p.Page + 1)
	}
	return out
}

func (s *Server) pageOf(r *request, param string) (int, int) {
	return intParam(r.Request, param, 1), intParam(r.Request, "size", s.o.PageSize)
}

// rootsIn reads the root Policies and PolicySets of namespace ("" for all)
// from the viewer's cache.
func (s *Server) rootsIn(r *request, namespace string) ([]*policyv1.Policy, []*policyv1beta1.PolicySet, error) {
	reader, err := s.viewers.roots(r.Context(), r.viewer, namespace)
	if err != nil {
		return nil, nil, err
	}
	var policies policyv1.PolicyList
	var sets policyv1beta1.PolicySetList
	// The pages only read: no copy of the cache's objects (a fleet of 3,000
	// clusters x 100 policies is 300,000 status entries).
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := reader.List(r.Context(), &policies, opts...); err != nil {
		return nil, nil, err
	}
	if err := reader.List(r.Context(), &sets, opts...); err != nil {
		return nil, nil, err
	}
	roots := make([]*policyv1.Policy, 0, len(policies.Items))
	for i := range policies.Items {
		roots = append(roots, &policies.Items[i])
	}
	ps := make([]*policyv1beta1.PolicySet, 0, len(sets.Items))
	for i := range sets.Items {
		ps = append(ps, &sets.Items[i])
	}
	return roots, ps, nil
}

// root reads one root policy (and its namespace's PolicySets) from the
// viewer's cache of its namespace.
func (s *Server) root(r *request, namespace, name string) (*policyv1.Policy, []*policyv1beta1.PolicySet, error) {
	roots, sets, err := s.rootsIn(r, namespace)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range roots {
		if p.Name == name {
			return p, sets, nil
		}
	}
	return nil, nil, apierrors.NewNotFound(policyv1.GroupVersion.WithResource("policies").GroupResource(), namespace+"/"+name)
}

// matrixClusters is how many clusters, worst first, the fleet's policies ×
// clusters table shows as columns.
const matrixClusters = 30

type fleetPage struct {
	Matrix        view.MatrixModel
	Namespace     string
	Model         view.FleetModel
	Policies      []view.PolicyRow
	PolicyPager   pager
	Clusters      []view.ClusterRow
	ClusterPager  pager
	Namespaces    []string
	NamespaceLink func(string) string
}

func (s *Server) fleet(r *request) (pageResult, error) {
	ns := r.URL.Query().Get("namespace")
	roots, sets, err := s.rootsIn(r, ns)
	if err != nil {
		return pageResult{}, err
	}
	m := view.Fleet(roots, sets)
	page := fleetPage{Namespace: ns, Model: m}
	seen := map[string]bool{}
	for _, p := range roots {
		if !seen[p.Namespace] {
			seen[p.Namespace] = true
			page.Namespaces = append(page.Namespaces, p.Namespace)
		}
	}
	slices.Sort(page.Namespaces)
	n, size := s.pageOf(r, "page")
	var pp, cp view.Paging
	page.Policies, pp = view.Page(m.Policies, n, size, s.o.MaxPageSize)
	page.PolicyPager = newPager(r, "page", pp)
	n, size = s.pageOf(r, "cpage")
	page.Clusters, cp = view.Page(m.Clusters, n, size, s.o.MaxPageSize)
	page.ClusterPager = newPager(r, "cpage", cp)
	// Policies x clusters: this page of policies against the worst clusters.
	columns := make([]string, 0, matrixClusters)
	for _, c := range m.Clusters[:min(len(m.Clusters), matrixClusters)] {
		columns = append(columns, c.Name)
	}
	page.Matrix = view.Matrix(roots, page.Policies, columns)
	title := "fleet"
	if ns != "" {
		title = "fleet · " + ns
	}
	return pageResult{Template: "fleet", Title: title, Data: page, Tables: fleetTables(m)}, nil
}

func counts(c view.Counts) []string {
	return []string{strconv.Itoa(c.NonCompliant), strconv.Itoa(c.Pending), strconv.Itoa(c.Unknown), strconv.Itoa(c.Compliant)}
}

var countColumns = []string{"nonCompliant", "pending", "noStatus", "compliant"}

func fleetTables(m view.FleetModel) map[string]view.Table {
	policies := view.Table{Name: "policies", Columns: append([]string{"namespace", "name", "compliant", "remediationAction", "rolloutStatus", "disabled"},
		append(slices.Clone(countColumns), "standards", "categories", "controls", "policySets")...)}
	for _, p := range m.Policies {
		row := []string{p.Namespace, p.Name, view.State(p.Compliant), p.RemediationAction, string(p.RolloutStatus), strconv.FormatBool(p.Disabled)}
		row = append(row, counts(p.Clusters)...)
		row = append(row, strings.Join(p.Standards, ","), strings.Join(p.Categories, ","), strings.Join(p.Controls, ","), strings.Join(p.PolicySets, ","))
		policies.Rows = append(policies.Rows, row)
	}
	clusters := view.Table{Name: "clusters", Columns: append([]string{"cluster", "worst"}, countColumns...)}
	for _, c := range m.Clusters {
		clusters.Rows = append(clusters.Rows, append([]string{c.Name, view.State(c.Policies.Worst())}, counts(c.Policies)...))
	}
	out := map[string]view.Table{"policies": policies, "clusters": clusters}
	for name, groups := range map[string][]view.GroupCount{"standards": m.Standards, "categories": m.Categories, "controls": m.Controls, "policySets": m.PolicySets} {
		t := view.Table{Name: name, Columns: append([]string{"name"}, countColumns...)}
		for _, g := range groups {
			t.Rows = append(t.Rows, append([]string{g.Name}, counts(g.Policies)...))
		}
		out[name] = t
	}
	return out
}

type templateInfo struct {
	Kind, Name    string
	Dependencies  []string
	IgnorePending bool
}

type eventLine struct {
	Time               time.Time
	Type, Reason, Note string
}

type policyPage struct {
	Policy       *policyv1.Policy
	Row          view.PolicyRow
	Templates    []templateInfo
	Dependencies []string
	Clusters     []view.ClusterLine
	Pager        pager
	Events       []eventLine
	EventsError  string
	WhyNote      string
}

// maxPendingReads bounds the replicas a policy page reads to say why
// clusters are Pending.
const maxPendingReads = 10

// pendingWhy fills, for the first maxPendingReads Pending clusters of a
// policy page, why they are Pending from their replicas (view.PendingWhy),
// and returns a note when there were more or a read failed.
func (s *Server) pendingWhy(r *request, p *policyv1.Policy, lines []view.ClusterLine) string {
	read := 0
	var notes []string
	for i := range lines {
		if lines[i].Compliant != policyv1.Pending {
			continue
		}
		if read == maxPendingReads {
			notes = append(notes, fmt.Sprintf("why a cluster is Pending is shown for the first %d Pending clusters of the page; the others' details pages say it", maxPendingReads))
			break
		}
		read++
		replica := &policyv1.Policy{}
		if err := r.viewer.client.Get(r.Context(), client.ObjectKey{Namespace: lines[i].Cluster, Name: p.Namespace + "." + p.Name}, replica); err != nil {
			notes = append(notes, lines[i].Cluster+": "+err.Error())
			continue
		}
		lines[i].Why = view.PendingWhy(replica)
	}
	return strings.Join(notes, "; ")
}

func dependencyString(d policyv1.PolicyDependency) string {
	ns := ""
	if d.Namespace != "" {
		ns = d.Namespace + "/"
	}
	return fmt.Sprintf("%s %s%s is %s", d.Kind, ns, d.Name, d.Compliance)
}

func templatesOf(p *policyv1.Policy) []templateInfo {
	var out []templateInfo
	for _, t := range p.Spec.PolicyTemplates {
		if t == nil {
			continue
		}
		def, _ := t.DefinitionMeta()
		info := templateInfo{Kind: def.Kind, Name: def.Name, IgnorePending: t.IgnorePending}
		for _, d := range t.ExtraDependencies {
			info.Dependencies = append(info.Dependencies, dependencyString(d))
		}
		out = append(out, info)
	}
	return out
}

// events reads the newest Events about a root policy (at most MaxReads).
func (s *Server) events(r *request, p *policyv1.Policy) ([]eventLine, error) {
	var list eventsv1.EventList
	sel := fields.AndSelectors(fields.OneTermEqualSelector("regarding.name", p.Name), fields.OneTermEqualSelector("regarding.kind", "Policy"))
	if err := r.viewer.client.List(r.Context(), &list, client.InNamespace(p.Namespace), client.MatchingFieldsSelector{Selector: sel},
		client.Limit(s.o.MaxReads)); err != nil {
		return nil, err
	}
	out := make([]eventLine, 0, len(list.Items))
	for _, e := range list.Items {
		t := e.EventTime.Time
		if e.Series != nil {
			t = e.Series.LastObservedTime.Time
		}
		if t.IsZero() {
			t = e.DeprecatedLastTimestamp.Time
		}
		if t.IsZero() {
			t = e.CreationTimestamp.Time
		}
		out = append(out, eventLine{Time: t, Type: e.Type, Reason: e.Reason, Note: e.Note})
	}
	slices.SortFunc(out, func(a, b eventLine) int { return b.Time.Compare(a.Time) })
	return out, nil
}

func (s *Server) policy(r *request) (pageResult, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	p, sets, err := s.root(r, ns, name)
	if err != nil {
		return pageResult{}, err
	}
	page := policyPage{Policy: p, Row: view.Fleet([]*policyv1.Policy{p}, sets).Policies[0], Templates: templatesOf(p)}
	for _, d := range p.Spec.Dependencies {
		page.Dependencies = append(page.Dependencies, dependencyString(d))
	}
	lines := view.PolicyClusters(p)
	n, size := s.pageOf(r, "page")
	var pg view.Paging
	page.Clusters, pg = view.Page(lines, n, size, s.o.MaxPageSize)
	page.Pager = newPager(r, "page", pg)
	page.WhyNote = s.pendingWhy(r, p, page.Clusters)
	if page.Events, err = s.events(r, p); err != nil {
		page.EventsError = err.Error()
	}
	if len(page.Events) > 20 {
		page.Events = page.Events[:20]
	}
	t := view.Table{Name: "clusters", Columns: []string{"cluster", "compliant", "rolloutStatus", "rolloutSince"}}
	for _, l := range lines {
		t.Rows = append(t.Rows, []string{l.Cluster, view.State(l.Compliant), string(l.RolloutStatus), l.Since})
	}
	return pageResult{Template: "policy", Title: ns + "/" + name, Data: page, Tables: map[string]view.Table{"clusters": t}}, nil
}

type replicaPage struct {
	Namespace, Name, Cluster string
	Replica                  *policyv1.Policy
	Templates                []templateInfo
}

// replica reads one cluster's replicated policy: its templates' compliance
// and the history the replica holds.
func (s *Server) replica(r *request) (pageResult, error) {
	ns, name, cluster := r.PathValue("namespace"), r.PathValue("name"), r.PathValue("cluster")
	replica := &policyv1.Policy{}
	if err := r.viewer.client.Get(r.Context(), client.ObjectKey{Namespace: cluster, Name: ns + "." + name}, replica); err != nil {
		return pageResult{}, err
	}
	if replica.Labels[replication.LabelRootPolicy] != ns+"."+name {
		return pageResult{}, apierrors.NewNotFound(policyv1.GroupVersion.WithResource("policies").GroupResource(), cluster+"/"+ns+"."+name)
	}
	t := view.Table{Name: "history", Columns: []string{"template", "compliant", "time", "message"}}
	for _, d := range replica.Status.Details {
		if d == nil {
			continue
		}
		for _, h := range d.History {
			t.Rows = append(t.Rows, []string{d.TemplateMeta.Name, view.State(d.ComplianceState), h.LastTimestamp.UTC().Format(time.RFC3339), h.Message})
		}
	}
	return pageResult{Template: "replica", Title: ns + "/" + name + " on " + cluster,
		Data:   replicaPage{Namespace: ns, Name: name, Cluster: cluster, Replica: replica, Templates: templatesOf(replica)},
		Tables: map[string]view.Table{"history": t}}, nil
}

type rolloutPage struct {
	Model        view.TimelineModel
	Chart        template.HTML
	Events       []eventLine
	Notes        []string
	PlanLocal    bool
	ReplicasNote string
	LiveNote     string
	Clusters     []view.TimelineCluster
	Pager        pager
}

func (s *Server) rollout(r *request) (pageResult, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	p, sets, err := s.root(r, ns, name)
	if err != nil {
		return pageResult{}, err
	}
	page := rolloutPage{}
	var plan *fleetv1alpha1.RolloutPlan
	got := &fleetv1alpha1.RolloutPlan{}
	switch err := r.viewer.client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: name}, got); {
	case err == nil:
		plan = got
		page.PlanLocal = got.Annotations["config.kubernetes.io/local-config"] == "true"
	case apierrors.IsNotFound(err):
	default:
		page.Notes = append(page.Notes, "RolloutPlan: "+err.Error())
	}
	// Replicas' own rolloutStatus, where the hub writes it: at most MaxReads.
	replicas := map[string]policyv1.RolloutStatus{}
	var list policyv1.PolicyList
	if err := r.viewer.client.List(r.Context(), &list, client.MatchingLabels{replication.LabelRootPolicy: ns + "." + name},
		client.Limit(s.o.MaxReads)); err != nil {
		page.ReplicasNote = "replicas: " + err.Error()
	} else {
		for _, rp := range list.Items {
			if rp.Status.RolloutStatus != "" {
				replicas[rp.Labels[replication.LabelClusterName]] = rp.Status.RolloutStatus
			}
		}
		if list.Continue != "" {
			page.ReplicasNote = fmt.Sprintf("replicas' own rolloutStatus read for the first %d replicas only", s.o.MaxReads)
		}
	}
	var start time.Time
	if page.Events, err = s.events(r, p); err != nil {
		page.Notes = append(page.Notes, "events: "+err.Error())
	}
	var rolloutEvents []eventLine
	for _, e := range page.Events {
		if strings.HasPrefix(e.Reason, "Rollout") {
			rolloutEvents = append(rolloutEvents, e)
			if e.Reason == "RolloutWave" && (start.IsZero() || e.Time.Before(start)) {
				start = e.Time
			}
		}
	}
	page.Events = rolloutEvents
	in := view.TimelineInput{Root: p, Plan: plan, Replicas: replicas, Start: start, Now: r.now}
	live, err := s.livePlan(r, p, sets)
	if err != nil {
		page.LiveNote = err.Error()
	} else {
		in.Live = live
	}
	page.Model = view.Timeline(in)
	page.Chart = view.TimelineSVG(page.Model)
	var all []view.TimelineCluster
	for _, w := range page.Model.Waves {
		all = append(all, w.Clusters...)
	}
	n, size := s.pageOf(r, "page")
	var pg view.Paging
	page.Clusters, pg = view.Page(all, n, size, s.o.MaxPageSize)
	page.Pager = newPager(r, "page", pg)
	t := view.Table{Name: "clusters", Columns: []string{"wave", "cluster", "rolloutStatus", "replicaRolloutStatus", "compliant", "since"}}
	for _, c := range all {
		since := ""
		if c.Since != nil {
			since = c.Since.UTC().Format(time.RFC3339)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(c.Wave), c.Name, string(c.Status), string(c.ReplicaStatus), view.State(c.Compliant), since})
	}
	w := view.Table{Name: "waves", Columns: []string{"wave", "state", "clusters", "decisionGroups", "start", "end", "toCompliant"}}
	for _, wv := range page.Model.Waves {
		start, end := "", ""
		if wv.Start != nil {
			start = wv.Start.UTC().Format(time.RFC3339)
		}
		if wv.End != nil {
			end = wv.End.UTC().Format(time.RFC3339)
		}
		w.Rows = append(w.Rows, []string{strconv.Itoa(wv.Index), wv.State, strconv.Itoa(len(wv.Clusters)), strings.Join(wv.DecisionGroups, " "), start, end, wv.ToCompliant.String()})
	}
	return pageResult{Template: "rollout", Title: "rollout of " + ns + "/" + name, Data: page,
		Tables: map[string]view.Table{"clusters": t, "waves": w}}, nil
}

type decisionLine struct {
	Placement, Cluster, Group, Reason string
}

type placementEntry struct {
	*policyv1.Placement
	Kind, Name string
	Decisions  int
	Error      string
}

type placementPage struct {
	Policy      *policyv1.Policy
	Entries     []placementEntry
	Decisions   []view.Excluded
	Excluded    []view.Excluded
	Pager       pager
	Conditions  []metav1.Condition
	ExplainNote string
}

// placement shows the placements a root is bound through, their decisions,
// and each decided cluster the policy does not go to, with the reason.
func (s *Server) placement(r *request) (pageResult, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	p, sets, err := s.root(r, ns, name)
	if err != nil {
		return pageResult{}, err
	}
	page := placementPage{Policy: p}
	decided := map[string][]view.Decided{}
	for _, e := range p.Status.Placement {
		if e == nil {
			continue
		}
		entry := placementEntry{Placement: e}
		switch {
		case e.Placement != "":
			entry.Kind, entry.Name = "Placement", e.Placement
			if _, read := decided[e.Placement]; !read {
				var list clusterv1beta1.PlacementDecisionList
				if err := r.viewer.client.List(r.Context(), &list, client.InNamespace(ns),
					client.MatchingLabels{clusterv1beta1.PlacementLabel: e.Placement}, client.Limit(s.o.MaxReads)); err != nil {
					entry.Error = err.Error()
				}
				var ds []view.Decided
				for _, d := range list.Items {
					group := d.Labels[clusterv1beta1.DecisionGroupNameLabel]
					if idx := d.Labels[clusterv1beta1.DecisionGroupIndexLabel]; idx != "" {
						group += "[" + idx + "]"
					}
					for _, c := range d.Status.Decisions {
						ds = append(ds, view.Decided{Placement: e.Placement, Cluster: c.ClusterName, Group: group, Reason: c.Reason})
					}
				}
				decided[e.Placement] = ds
			}
			entry.Decisions = len(decided[e.Placement])
		case e.PlacementRule != "":
			entry.Kind, entry.Name = "PlacementRule", e.PlacementRule
			key := "PlacementRule " + e.PlacementRule
			if _, read := decided[key]; !read {
				rule := &appsv1.PlacementRule{}
				if err := r.viewer.client.Get(r.Context(), client.ObjectKey{Namespace: ns, Name: e.PlacementRule}, rule); err != nil {
					entry.Error = err.Error()
				}
				var ds []view.Decided
				for _, d := range rule.Status.Decisions {
					ds = append(ds, view.Decided{Placement: key, Cluster: d.ClusterName})
				}
				decided[key] = ds
			}
			entry.Decisions = len(decided[key])
		}
		page.Entries = append(page.Entries, entry)
	}
	for _, c := range p.Status.Conditions {
		if c.Status != metav1.ConditionTrue || c.Type == "ClustersUnknown" || c.Type == "Invalid" {
			page.Conditions = append(page.Conditions, c)
		}
	}
	explained, note := s.explainPlacement(r.Context(), r.viewer.client, p)
	page.ExplainNote = note
	all, excluded := view.Placement(p, sets, decided, binding.ClustersAnnotation, explained)
	n, size := s.pageOf(r, "page")
	var pg view.Paging
	page.Decisions, pg = view.Page(all, n, size, s.o.MaxPageSize)
	page.Pager = newPager(r, "page", pg)
	page.Excluded = excluded
	t := view.Table{Name: "decisions", Columns: []string{"placement", "group", "cluster", "bound", "reason"}}
	for _, d := range all {
		t.Rows = append(t.Rows, []string{d.Placement, d.Group, d.Cluster, strconv.FormatBool(d.Bound), d.Reason})
	}
	x := view.Table{Name: "excluded", Columns: []string{"placement", "group", "cluster", "reason"}}
	for _, d := range excluded {
		x.Rows = append(x.Rows, []string{d.Placement, d.Group, d.Cluster, d.Reason})
	}
	return pageResult{Template: "placement", Title: "placement of " + ns + "/" + name, Data: page,
		Tables: map[string]view.Table{"decisions": t, "excluded": x}}, nil
}

type clusterPolicy struct {
	Namespace, Name string
	Replica         policyv1.Policy
}

type clusterPage struct {
	Name         string
	Cluster      *clusterv1.ManagedCluster
	ClusterError string
	Policies     []clusterPolicy
	Counts       view.Counts
	More         bool
	Available    string
}

// cluster shows every policy replicated to a cluster (its namespace's
// replicas, at most MaxReads).
func (s *Server) cluster(r *request) (pageResult, error) {
	name := r.PathValue("name")
	page := clusterPage{Name: name}
	var list policyv1.PolicyList
	if err := r.viewer.client.List(r.Context(), &list, client.InNamespace(name), client.HasLabels{replication.LabelRootPolicy},
		client.Limit(s.o.MaxReads)); err != nil {
		return pageResult{}, err
	}
	page.More = list.Continue != ""
	mc := &clusterv1.ManagedCluster{}
	if err := r.viewer.client.Get(r.Context(), client.ObjectKey{Name: name}, mc); err != nil {
		page.ClusterError = err.Error()
	} else {
		page.Cluster = mc
		for _, c := range mc.Status.Conditions {
			if c.Type == clusterv1.ManagedClusterConditionAvailable {
				page.Available = string(c.Status)
			}
		}
	}
	for _, rp := range list.Items {
		root := rp.Labels[replication.LabelRootPolicy]
		rns, rname, ok := strings.Cut(root, ".")
		if !ok {
			continue
		}
		page.Policies = append(page.Policies, clusterPolicy{Namespace: rns, Name: rname, Replica: rp})
		page.Counts.Add(rp.Status.ComplianceState)
	}
	slices.SortFunc(page.Policies, func(a, b clusterPolicy) int {
		return cmp.Or(cmp.Compare(view.Rank(a.Replica.Status.ComplianceState), view.Rank(b.Replica.Status.ComplianceState)),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	t := view.Table{Name: "policies", Columns: []string{"namespace", "policy", "compliant", "remediationAction", "rolloutStatus"}}
	for _, cp := range page.Policies {
		t.Rows = append(t.Rows, []string{cp.Namespace, cp.Name, view.State(cp.Replica.Status.ComplianceState),
			string(cp.Replica.Spec.RemediationAction), string(cp.Replica.Status.RolloutStatus)})
	}
	return pageResult{Template: "cluster", Title: "cluster " + name, Data: page, Tables: map[string]view.Table{"policies": t}}, nil
}
