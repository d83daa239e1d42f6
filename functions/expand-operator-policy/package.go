package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// objectID identifies an object in a package: what an API server would see
// as the same object.
type objectID struct {
	Group, Kind, Namespace, Name string
}

func idOf(o *fn.KubeObject) objectID {
	gk := o.GroupKind()
	return objectID{Group: gk.Group, Kind: gk.Kind, Namespace: krm.MetadataOf(o, "namespace"), Name: krm.MetadataOf(o, "name")}
}

func (id objectID) String() string {
	if id.Namespace == "" {
		return id.Kind + " " + id.Name
	}
	return id.Kind + " " + id.Namespace + "/" + id.Name
}

// packageItems are the items of the ResourceList: the OperatorPolicies the function owns
// and every other item, which it never changes.
type packageItems struct {
	items []*fn.KubeObject
	// owned are the OperatorPolicy items that are not local-config, in order.
	owned []*fn.KubeObject
	// others are the other items by identity; the first one wins.
	others map[objectID]*fn.KubeObject
}

func newPackage(items fn.KubeObjects) *packageItems {
	p := &packageItems{items: items, others: map[objectID]*fn.KubeObject{}}
	for _, item := range items {
		gk := item.GroupKind()
		if gk.Group == v1beta1.GroupVersion.Group && gk.Kind == "OperatorPolicy" && !item.IsLocalConfig() {
			p.owned = append(p.owned, item)
			continue
		}
		if _, dup := p.others[idOf(item)]; !dup {
			p.others[idOf(item)] = item
		}
	}
	return p
}

// replace returns the items with each owned item replaced, in place, by the
// objects in replacements. An owned item read from a file (kpt's path
// annotation) has its objects written to the same file, after every item the
// file holds: the function must not renumber other items, and kpt refuses two
// items of one file with the same index.
func (p *packageItems) replace(replacements map[*fn.KubeObject][]*fn.KubeObject) fn.KubeObjects {
	lastIndex := map[string]int{}
	for _, item := range p.items {
		// Other items are read following YAML aliases: the function must
		// pass them through whatever they hold.
		if path := krm.AnnotationOf(item, kioutil.PathAnnotation); path != "" {
			index, err := strconv.Atoi(krm.AnnotationOf(item, kioutil.IndexAnnotation))
			if err != nil {
				index = -1
			}
			lastIndex[path] = max(lastIndex[path], index)
		}
	}
	var items fn.KubeObjects
	for _, item := range p.items {
		objects, owned := replacements[item]
		if !owned {
			items = append(items, item)
			continue
		}
		path := item.PathAnnotation()
		for _, obj := range objects {
			if path != "" {
				lastIndex[path]++
				setFile(obj, item, lastIndex[path])
			}
			items = append(items, obj)
		}
	}
	return items
}

// setFile puts obj, an object made by newObject, into the file of item, at
// index, with the annotations kpt writes files from: path and index, in the
// spellings item has, and the sequence indentation of item.
func setFile(obj, item *fn.KubeObject, index int) {
	set := func(key, value string) {
		if item.GetAnnotation(key) != "" {
			_ = obj.SetAnnotation(key, value) // obj is a map
		}
	}
	set(kioutil.PathAnnotation, item.GetAnnotation(kioutil.PathAnnotation))
	set(kioutil.LegacyPathAnnotation, item.GetAnnotation(kioutil.LegacyPathAnnotation))
	set(kioutil.SeqIndentAnnotation, item.GetAnnotation(kioutil.SeqIndentAnnotation))
	set(kioutil.IndexAnnotation, strconv.Itoa(index))
	set(kioutil.LegacyIndexAnnotation, strconv.Itoa(index))
}

// output collects what a mode makes of the OperatorPolicies.
type output struct {
	pkg *packageItems
	// objects are, per OperatorPolicy item, the objects that replace it.
	objects map[*fn.KubeObject][]*fn.KubeObject
	// placed are the objects placed so far, with the OperatorPolicy that
	// placed each.
	placed map[objectID]placedObject
	// results are, per OperatorPolicy item, the results about it.
	results map[*fn.KubeObject]fn.Results
}

type placedObject struct {
	object *fn.KubeObject
	by     *fn.KubeObject
	// content is the content of object, once another object is compared with it.
	content map[string]any
}

func newOutput(pkg *packageItems, sources []*source) *output {
	o := &output{pkg: pkg, objects: map[*fn.KubeObject][]*fn.KubeObject{}, placed: map[objectID]placedObject{},
		results: map[*fn.KubeObject]fn.Results{}}
	for _, s := range sources {
		o.objects[s.item] = nil // an OperatorPolicy is replaced, by nothing if need be
		o.results[s.item] = append(o.results[s.item], s.notes...)
	}
	return o
}

// report records a result about the OperatorPolicy of s.
func (o *output) report(s *source, severity fn.Severity, field, message string) {
	o.results[s.item] = append(o.results[s.item], krm.ObjectResult(s.item, severity, field, message))
}

// fail records an error about the OperatorPolicy of s.
func (o *output) fail(s *source, field, message string) { o.report(s, fn.Error, field, message) }

// allResults are the results in the order of the items they are about.
func (o *output) allResults() fn.Results {
	var all fn.Results
	for _, item := range o.pkg.owned {
		all = append(all, o.results[item]...)
	}
	return all
}

// place makes obj one of the objects that replace the OperatorPolicy of s,
// unless an object of the same identity is in the package already or was
// placed for another OperatorPolicy: then that one is used if it is the same
// (metadata aside), and a different one is an error about field of s. It
// reports whether obj is usable.
func (o *output) place(s *source, field string, obj *fn.KubeObject) bool {
	id := idOf(obj)
	var holder string
	var existing map[string]any
	if item, found := o.pkg.others[id]; found {
		holder, existing = "the package already holds", content(item)
	} else if prev, found := o.placed[id]; found {
		holder = fmt.Sprintf("OperatorPolicy %s also wants", idOf(prev.by).nameRef())
		if prev.content == nil {
			prev.content = content(prev.object)
			o.placed[id] = prev
		}
		existing = prev.content
	} else {
		o.placed[id] = placedObject{object: obj, by: s.item}
		o.objects[s.item] = append(o.objects[s.item], obj)
		return true
	}
	if paths := differences(content(obj), existing); len(paths) > 0 {
		o.fail(s, field, fmt.Sprintf("%s %s, which differs at %s", holder, id, strings.Join(paths, ", ")))
		return false
	}
	return true
}

func (id objectID) nameRef() string {
	if id.Namespace == "" {
		return id.Name
	}
	return id.Namespace + "/" + id.Name
}

// content is obj without metadata and status, as a JSON value.
func content(obj *fn.KubeObject) map[string]any {
	m, err := krm.Object(obj)
	if err != nil { // items come from YAML and always convert; keep them unequal to anything if not
		return map[string]any{"unreadable": err.Error()}
	}
	delete(m, "metadata")
	delete(m, "status")
	return m
}

// differences returns the paths of the fields where want and have differ,
// at most maxDifferences of them.
func differences(want, have any) []string {
	var paths []string
	collectDifferences(want, have, "", &paths)
	return paths
}

const maxDifferences = 5

func collectDifferences(want, have any, path string, paths *[]string) {
	if len(*paths) >= maxDifferences {
		return
	}
	wantMap, wantIsMap := want.(map[string]any)
	haveMap, haveIsMap := have.(map[string]any)
	if wantIsMap && haveIsMap {
		keys := slices.Concat(slices.Collect(maps.Keys(wantMap)), slices.Collect(maps.Keys(haveMap)))
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			collectDifferences(wantMap[k], haveMap[k], sub, paths)
		}
		return
	}
	wantList, wantIsList := want.([]any)
	haveList, haveIsList := have.([]any)
	if wantIsList && haveIsList && len(wantList) == len(haveList) {
		for i := range wantList {
			collectDifferences(wantList[i], haveList[i], fmt.Sprintf("%s[%d]", path, i), paths)
		}
		return
	}
	if !reflect.DeepEqual(want, have) {
		*paths = append(*paths, path)
	}
}

// newObject makes an item of a typed API object, as newNode.
func newObject(obj any, unset ...[]string) (*fn.KubeObject, error) {
	node, err := newNode(obj, unset...)
	if err != nil {
		return nil, err
	}
	return fn.MoveToKubeObject(node), nil
}

// newNode makes the YAML of a typed API object. Status and
// metadata.creationTimestamp, which API types marshal even when unset, are
// left out, and so are the fields at unset (paths of field names and list
// indexes), which the function never sets. Fields keep the type's order,
// apiVersion and kind first.
func newNode(obj any, unset ...[]string) (*yaml.RNode, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	root, err := krm.NodeFromJSON(raw)
	if err != nil {
		return nil, err
	}
	node := yaml.NewRNode(root)
	for _, path := range slices.Concat(unset, [][]string{{"status"}, {"metadata", "creationTimestamp"}}) {
		parent, field := path[:len(path)-1], path[len(path)-1]
		if err := node.PipeE(yaml.Lookup(parent...), yaml.Clear(field)); err != nil {
			return nil, err
		}
	}
	rank := func(key *yaml.Node) int {
		switch key.Value {
		case "apiVersion":
			return 0
		case "kind":
			return 1
		}
		return 2
	}
	fields := node.YNode().Content
	pairs := make([][2]*yaml.Node, 0, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{fields[i], fields[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b [2]*yaml.Node) int { return rank(a[0]) - rank(b[0]) })
	fields = fields[:0]
	for _, pair := range pairs {
		fields = append(fields, pair[0], pair[1])
	}
	node.YNode().Content = fields
	return node, nil
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func objectMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace}
}
