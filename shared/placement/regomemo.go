package placement

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// A Rego policy's verdict depends on the input document and the inventory
// alone: the built-ins that could make it depend on anything else do not
// compile (regoDeniedBuiltins). A policy that reads only some paths of the
// input, as placement policies do (the resource's annotations, mostly), gives
// every resource with the same values at those paths the same verdict, so a
// fleet's thousands of Policies that ask for the same placement are evaluated
// once per inventory.

// regoInputReads returns the paths of the input document that the module
// reads: the ground prefix of every reference into input (input.a.b[x] reads
// a.b) and the ground path of every object.get(input, path, default). A path
// runs from the input's root through object keys. ok is false when the module
// reads the input in any other way (the input itself, a path that is not
// ground from its root, `with input`), or through an empty path: its verdict
// depends on the whole input, and is not memoized.
func regoInputReads(module *ast.Module) (reads [][]string, ok bool) {
	ok = true
	record := func(path []string) {
		if len(path) == 0 {
			ok = false
			return
		}
		reads = append(reads, path)
	}
	for _, imp := range module.Imports {
		if ref, isRef := imp.Path.Value.(ast.Ref); isRef && ref.HasPrefix(ast.InputRootRef) {
			record(groundPath(ref[1:]))
		}
	}
	var visitor *ast.GenericVisitor
	// visitAll visits terms with the visitor; the visitor's callback returns
	// true for the nodes whose children it visits itself.
	visitAll := func(terms []*ast.Term) {
		for _, t := range terms {
			visitor.Walk(t)
		}
	}
	visitor = ast.NewGenericVisitor(func(x any) bool {
		if !ok {
			return true
		}
		switch x := x.(type) {
		case *ast.Expr:
			for _, w := range x.With {
				if ref, isRef := w.Target.Value.(ast.Ref); isRef && ref.HasPrefix(ast.InputRootRef) {
					ok = false
				}
			}
			if terms, isCall := x.Terms.([]*ast.Term); isCall && readsThroughObjectGet(terms, record) {
				visitAll(terms[2:])
				for _, w := range x.With {
					visitor.Walk(w)
				}
				return true
			}
		case ast.Call:
			if readsThroughObjectGet(x, record) {
				visitAll(x[2:])
				return true
			}
		case ast.Ref:
			if x.HasPrefix(ast.InputRootRef) {
				record(groundPath(x[1:]))
				visitAll(x[1:])
				return true
			}
		case ast.Var:
			if x.Equal(ast.InputRootDocument.Value) {
				ok = false // the input itself, not through a path
			}
		}
		return false
	})
	for _, rule := range module.Rules {
		visitor.Walk(rule)
	}
	if !ok {
		return nil, false
	}
	return reads, true
}

// readsThroughObjectGet records the path of a call object.get(input, path,
// default) whose path is ground, and reports whether the call is one.
func readsThroughObjectGet(call []*ast.Term, record func([]string)) bool {
	if len(call) != 4 || !call[0].Equal(ast.RefTerm(ast.VarTerm("object"), ast.StringTerm("get"))) {
		return false
	}
	if !call[1].Equal(ast.InputRootDocument) && !call[1].Equal(ast.NewTerm(ast.InputRootRef)) {
		return false
	}
	switch path := call[2].Value.(type) {
	case ast.String:
		record([]string{string(path)})
		return true
	case *ast.Array:
		terms := make([]*ast.Term, path.Len())
		for i := range terms {
			terms[i] = path.Elem(i)
		}
		if p := groundPath(terms); len(p) == len(terms) {
			record(p)
			return true
		}
	}
	return false
}

// groundPath is the leading run of string terms of a reference or path: the
// object keys it names before any variable, number or other term.
func groundPath(terms []*ast.Term) []string {
	var path []string
	for _, t := range terms {
		s, isString := t.Value.(ast.String)
		if !isString {
			break
		}
		path = append(path, string(s))
	}
	return path
}

// verdictMemo holds the verdicts of one Rego program by what it reads of the
// input, for one inventory generation.
type verdictMemo struct {
	reads [][]string

	mu         sync.Mutex
	generation uint64
	verdicts   map[string]Verdict
	size       int // of the keys and verdicts held, in bytes of text
}

// maxMemoSize bounds the text a program's memo holds (keys, annotations,
// messages and reasons), in bytes; it starts over when full. A verdict over
// 1,000 clusters lists up to 1,000 names, about 15 KB: the hub keeps at most
// a few MiB per policy.
const maxMemoSize = 2 << 20

// key is what decides the verdict of object: explain and the value at every
// path the program reads. A path is followed through objects while it can;
// where it stops (a missing key, a value that is not an object) the key holds
// how far it went and the value there, so two objects share a key only when
// every read gives the same answer. ok is false when a value is of a type a
// decoded JSON document does not hold.
func (m *verdictMemo) key(object map[string]any, explain bool) (key string, ok bool) {
	buf := strconv.AppendBool(nil, explain)
	for _, path := range m.reads {
		var value any = object
		depth := 0
		for _, k := range path {
			obj, isObject := value.(map[string]any)
			if !isObject {
				break
			}
			next, found := obj[k]
			if !found {
				value = nil
				depth = -1 - depth // missing at this depth, told apart from a null
				break
			}
			value = next
			depth++
		}
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, int64(depth), 10)
		buf = append(buf, ':')
		if buf, ok = appendValue(buf, value); !ok {
			return "", false
		}
	}
	return string(buf), true
}

// appendValue appends a text of v that no other value has: strings quoted
// (invalid UTF-8 escaped byte by byte, where JSON would replace it), object
// keys sorted, numbers marked with their Go type. ok is false for a type a
// decoded JSON document does not hold.
func appendValue(buf []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case nil:
		return append(buf, 'n'), true
	case bool:
		return strconv.AppendBool(buf, v), true
	case string:
		return strconv.AppendQuote(buf, v), true
	case float64:
		return strconv.AppendFloat(append(buf, 'f'), v, 'g', -1, 64), true
	case int64:
		return strconv.AppendInt(append(buf, 'i'), v, 10), true
	case int:
		return strconv.AppendInt(append(buf, 'i'), int64(v), 10), true
	case uint64:
		return strconv.AppendUint(append(buf, 'u'), v, 10), true
	case json.Number:
		return strconv.AppendQuote(append(buf, '#'), string(v)), true
	case []any:
		buf = append(buf, '[')
		for _, e := range v {
			if buf, ok = appendValue(buf, e); !ok {
				return nil, false
			}
			buf = append(buf, ',')
		}
		return append(buf, ']'), true
	case map[string]any:
		buf = append(buf, '{')
		for _, k := range slices.Sorted(maps.Keys(v)) {
			buf = strconv.AppendQuote(buf, k)
			buf = append(buf, ':')
			if buf, ok = appendValue(buf, v[k]); !ok {
				return nil, false
			}
			buf = append(buf, ',')
		}
		return append(buf, '}'), true
	default:
		return nil, false
	}
}

// get returns the verdict memoized for key in generation.
func (m *verdictMemo) get(generation uint64, key string) (Verdict, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.generation != generation {
		return Verdict{}, false
	}
	v, found := m.verdicts[key]
	return v, found
}

// put memoizes the verdict of key in generation, forgetting the verdicts of
// other generations.
func (m *verdictMemo) put(generation uint64, key string, v Verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if generation < m.generation {
		return // evaluated against an older inventory
	}
	size := len(key) + verdictSize(v)
	if size > maxMemoSize {
		return
	}
	if m.generation != generation || m.verdicts == nil || m.size+size > maxMemoSize {
		m.generation, m.verdicts, m.size = generation, map[string]Verdict{}, 0
	}
	if _, found := m.verdicts[key]; !found {
		m.verdicts[key] = v
		m.size += size
	}
}

// verdictSize is the length of the text a verdict holds.
func verdictSize(v Verdict) int {
	n := 0
	for k, value := range v.Annotations {
		n += len(k) + len(value)
	}
	for _, msg := range v.Errors {
		n += len(msg)
	}
	for cluster, reasons := range v.Excluded {
		n += len(cluster)
		for _, r := range reasons {
			n += len(r)
		}
	}
	return n
}
