package krm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// jsonValues are JSON texts of every kind of value, numbers in every spelling.
var jsonValues = []string{
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"n":"1","b":"true","e":""}}}`,
	`{"ints":[0,-0,7,-12,9223372036854775807,18446744073709551615,123456789012345678901234567890],` +
		`"floats":[1.5,-0.25,1e3,1E-3,2.5e+10,1e400],"bools":[true,false],"null":null,"empty":{},"none":[]}`,
	`{"strings":["010","yes","~","null","1e3","- x","a: b","#","multi\nline","tab\t","\u00e9\u0000","\/"],"<<":"merge"}`,
	`[{"nested":[[1],[{"k":"v"}]]}]`,
	`"scalar"`,
}

func TestNodeFromJSONIsParsedJSONInBlockStyle(t *testing.T) {
	for _, raw := range jsonValues {
		sameNodeAsParsed(t, []byte(raw))
	}
}

func FuzzNodeFromJSON(f *testing.F) {
	for _, raw := range jsonValues {
		f.Add([]byte(raw))
	}
	for _, c := range jsonEdgeCases {
		f.Add([]byte(c.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameNodeAsParsed(t, raw)
		sameNodeAsTokenWalk(t, raw)
	})
}

// sameNodeAsParsed checks that NodeFromJSON makes of raw the node yaml.Parse
// makes of it, in block style.
func sameNodeAsParsed(t *testing.T, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		if _, err := NodeFromJSON(raw); err == nil {
			t.Fatalf("NodeFromJSON(%q) accepted JSON that is not valid", raw)
		}
		return
	}
	parsed, err := yaml.Parse(string(raw))
	if err != nil {
		return // JSON that YAML cannot read (control characters)
	}
	want := parsed.YNode()
	blockStyle(want)
	got, err := NodeFromJSON(raw)
	if err != nil {
		t.Fatalf("NodeFromJSON(%q): %v", raw, err)
	}
	if diff := nodeDifference(got, want, "$"); diff != "" {
		t.Errorf("NodeFromJSON(%s): %s", raw, diff)
	}
}

func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}

func nodeDifference(got, want *yaml.Node, path string) string {
	if got.Kind != want.Kind || got.Tag != want.Tag || got.Value != want.Value || got.Style != want.Style ||
		len(got.Content) != len(want.Content) {
		return fmt.Sprintf("at %s: got kind %v tag %s value %q style %v and %d children, want kind %v tag %s value %q style %v and %d children",
			path, got.Kind, got.Tag, got.Value, got.Style, len(got.Content), want.Kind, want.Tag, want.Value, want.Style, len(want.Content))
	}
	for i := range got.Content {
		if diff := nodeDifference(got.Content[i], want.Content[i], fmt.Sprintf("%s[%d]", path, i)); diff != "" {
			return diff
		}
	}
	return ""
}

// jsonEdgeCases are JSON texts, valid or not, where a reader of JSON can go
// wrong.
var jsonEdgeCases = []struct {
	raw   string
	valid bool
}{
	// Strings: escapes, UTF-8, surrogates.
	{`"\"\\\/\b\f\n\r\t"`, true},
	{`"\u0041\u00e9\u20AC\u0000\u001f"`, true},
	{`"\ud83d\ude00 a pair"`, true},
	{`"\ud800 a lone high surrogate"`, true},
	{`"\udc00 a lone low surrogate"`, true},
	{`"\ud800\u0041 a high surrogate before a letter"`, true},
	{`"\ud800\ud800 two high surrogates"`, true},
	{`"\ud800\\"`, true},
	{"\"\xff invalid UTF-8\"", true},
	{"\"\xed\xa0\x80 a surrogate in UTF-8\"", true},
	{"\"\xc0\xaf an overlong slash\"", true},
	{"\"\xe2\x82 a cut rune\"", true},
	{"\"\xe2\x82\"", true},
	{"\"é € 😀 \uFFFD \x7f\"", true},
	{"{\"\xff\":\"a key of invalid UTF-8\",\"\\u00e9\":1}", true},
	{`"<>&\u003c\u003e\u0026\u2028"`, true},
	{`""`, true},
	{`"\x"`, false},
	{`"\u12"`, false},
	{`"\u12g4"`, false},
	{`"\U0041"`, false},
	{`"\`, false},
	{`"\"`, false},
	{`"unterminated`, false},
	{"\"a\x01control character\"", false},
	{"\"a raw\ttab\"", false},
	{"\"a raw\nnewline\"", false},
	{"\"\xff\x01\"", false},
	{"\"\\n\x1f\"", false},
	// Numbers.
	{`[0,-0,1,-1,10,123456789012345678,-12345678901234567]`, true},
	{`[1234567890123456789,-1234567890123456789,9223372036854775807,-9223372036854775808,9223372036854775808]`, true},
	{`[18446744073709551615,18446744073709551616,-9223372036854775809,100000000000000000000000000000]`, true},
	{`[0.0,-0.5,1.25,1e0,1E5,1e+5,1e-5,-1.5E-3,0e0,1e400,-1e400,1e-400,1.0e0001]`, true},
	{`01`, false},
	{`-01`, false},
	{`00`, false},
	{`-`, false},
	{`+1`, false},
	{`.5`, false},
	{`1.`, false},
	{`1.e5`, false},
	{`1e`, false},
	{`1e+`, false},
	{`1e+-1`, false},
	{`0x1F`, false},
	{`1_000`, false},
	{`NaN`, false},
	{`Infinity`, false},
	{`-Infinity`, false},
	// Literals.
	{`[true,false,null]`, true},
	{`tru`, false},
	{`truex`, false},
	{`True`, false},
	{`nul`, false},
	{`nulll`, false},
	{`[fals]`, false},
	// Arrays, objects and whitespace.
	{" \t\r\n{ \"a\" : [ 1 , { } , [ ] ] , \"b\" : { \"c\" : null } } \t\r\n", true},
	{`{"a":1,"a":2}`, true},
	{`{"":""}`, true},
	{`[[[[[]]]]]`, true},
	{``, false},
	{` `, false},
	{`[`, false},
	{`]`, false},
	{`{`, false},
	{`}`, false},
	{`[1,]`, false},
	{`[,1]`, false},
	{`[1 2]`, false},
	{`[1,,2]`, false},
	{`[1]]`, false},
	{`[1}`, false},
	{`{"a":1]`, false},
	{`{,}`, false},
	{`{"a"}`, false},
	{`{"a":}`, false},
	{`{"a" 1}`, false},
	{`{"a"::1}`, false},
	{`{"a":1,}`, false},
	{`{"a":1 "b":2}`, false},
	{`{1:2}`, false},
	{`{a:1}`, false},
	{`{'a':1}`, false},
	{`{[]:1}`, false},
	{`{}{}`, false},
	{`1 2`, false},
	{`[] x`, false},
	{`"a" "b"`, false},
	{"\xef\xbb\xbf{}", false},
	{"[1,\v2]", false},
	{"[1,\u00a02]", false},
	{"{} \x00", false},
	{`/* comment */ {}`, false},
}

func TestNodeFromJSONIsTheTokenWalks(t *testing.T) {
	for _, c := range jsonEdgeCases {
		if json.Valid([]byte(c.raw)) != c.valid {
			t.Fatalf("json.Valid(%q) = %t, want %t: fix the case", c.raw, !c.valid, c.valid)
		}
		if _, err := NodeFromJSON([]byte(c.raw)); (err == nil) != c.valid {
			t.Errorf("NodeFromJSON(%q) error %v, want valid %t", c.raw, err, c.valid)
		}
		sameNodeAsTokenWalk(t, []byte(c.raw))
	}
	for _, raw := range jsonValues {
		sameNodeAsTokenWalk(t, []byte(raw))
	}
}

func TestNodeFromJSONScalars(t *testing.T) {
	for _, c := range []struct{ raw, tag, value string }{
		{`"a\nb\u00e9\ud83d\ude00"`, yaml.NodeTagString, "a\nbé😀"},
		{`"\ud800\udbff"`, yaml.NodeTagString, "\uFFFD\uFFFD"},
		{"\"a\xffb\"", yaml.NodeTagString, "a\uFFFDb"},
		{`"010"`, yaml.NodeTagString, "010"},
		{`-0`, yaml.NodeTagInt, "-0"},
		{`123456789012345678`, yaml.NodeTagInt, "123456789012345678"},
		{`-9223372036854775808`, yaml.NodeTagInt, "-9223372036854775808"},
		{`18446744073709551615`, yaml.NodeTagInt, "18446744073709551615"},
		{`18446744073709551616`, yaml.NodeTagFloat, "18446744073709551616"},
		{`1.50`, yaml.NodeTagFloat, "1.50"},
		{`1E+5`, yaml.NodeTagFloat, "1E+5"},
		{`1e400`, yaml.NodeTagString, "1e400"},
		{`true`, yaml.NodeTagBool, "true"},
		{`false`, yaml.NodeTagBool, "false"},
		{`null`, yaml.NodeTagNull, "null"},
	} {
		got, err := NodeFromJSON([]byte(c.raw))
		want := &yaml.Node{Kind: yaml.ScalarNode, Tag: c.tag, Value: c.value}
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("NodeFromJSON(%s) = %+v, %v; want %+v", c.raw, got, err, want)
		}
	}
}

// TestNodeFromJSONNestsAsDeepAsEncodingJSON checks the one way NodeFromJSON
// parts from the token walk: like json.Valid and json.Unmarshal, it refuses
// arrays and objects nested more than 10,000 deep, where the token walk reads
// on.
func TestNodeFromJSONNestsAsDeepAsEncodingJSON(t *testing.T) {
	for _, c := range []struct{ open, close string }{{`[`, `]`}, {`{"a":`, `}`}} {
		for _, depth := range []int{maxJSONDepth, maxJSONDepth + 1} {
			raw := []byte(strings.Repeat(c.open, depth) + "1" + strings.Repeat(c.close, depth))
			_, err := NodeFromJSON(raw)
			if valid := depth <= maxJSONDepth; (err == nil) != valid || json.Valid(raw) != valid {
				t.Errorf("NodeFromJSON of %d %q deep: error %v, want valid %t as json.Valid", depth, c.open, err, valid)
			}
			sameNodeAsTokenWalk(t, raw)
		}
	}
}

// sameNodeAsTokenWalk checks that NodeFromJSON accepts raw when json.Valid
// does, and makes of it the node the walk of encoding/json's tokens makes.
func sameNodeAsTokenWalk(t *testing.T, raw []byte) {
	t.Helper()
	got, err := NodeFromJSON(raw)
	if (err == nil) != json.Valid(raw) {
		t.Fatalf("NodeFromJSON(%q) error %v; json.Valid says %t", raw, err, json.Valid(raw))
	}
	want, wantErr := nodeFromJSONTokens(raw)
	switch {
	case err != nil && wantErr == nil && nestedTooDeep(raw):
		// The token walk has no limit of depth; encoding/json's other readers do.
	case (err == nil) != (wantErr == nil):
		t.Fatalf("NodeFromJSON(%q) error %v; the token walk's %v", raw, err, wantErr)
	case err == nil && !reflect.DeepEqual(got, want):
		diff := nodeDifference(got, want, "$")
		if diff == "" {
			diff = fmt.Sprintf("a Content list that is nil in one is empty in the other, or a field other than kind, tag, value and style:\n%#v\n%#v", got, want)
		}
		t.Errorf("NodeFromJSON(%q) differs from the token walk: %s", raw, diff)
	}
}

// nestedTooDeep reports whether encoding/json refuses raw for its depth.
func nestedTooDeep(raw []byte) bool {
	var v any
	err := json.Unmarshal(raw, &v)
	return err != nil && strings.Contains(err.Error(), "exceeded max depth")
}

// nodeFromJSONTokens is what NodeFromJSON was: a walk of encoding/json's
// tokens, slow but plainly right, the oracle of the scanner.
func nodeFromJSONTokens(raw []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	node, err := nodeFromTokens(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more JSON after the value")
	}
	return node, nil
}

func nodeFromTokens(dec *json.Decoder) (*yaml.Node, error) {
	token, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := token.(type) {
	case json.Delim:
		node := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		if t == '[' {
			node = &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		}
		for dec.More() {
			if node.Kind == yaml.MappingNode {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				node.Content = append(node.Content, scalarNode(yaml.NodeTagString, key.(string)))
			}
			value, err := nodeFromTokens(dec)
			if err != nil {
				return nil, err
			}
			node.Content = append(node.Content, value)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return node, nil
	case string:
		return scalarNode(yaml.NodeTagString, t), nil
	case json.Number:
		// The tag YAML resolves the number to: !!int or !!float.
		return scalarNode((&yaml.Node{Kind: yaml.ScalarNode, Value: t.String()}).ShortTag(), t.String()), nil
	case bool:
		return scalarNode(yaml.NodeTagBool, fmt.Sprint(t)), nil
	default: // nil
		return scalarNode(yaml.NodeTagNull, "null"), nil
	}
}

func scalarNode(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

// benchmarkObject is the kind of object the functions make: an
// OperatorPolicy's Subscription and the policy around it, about 2 KB of JSON.
func benchmarkObject() map[string]any {
	labels := map[string]any{}
	for i := range 6 {
		labels[fmt.Sprintf("app.kubernetes.io/label-%d", i)] = fmt.Sprintf("value-%d", i)
	}
	env := []any{}
	for i := range 8 {
		env = append(env, map[string]any{"name": fmt.Sprintf("ENV_%d", i), "value": fmt.Sprintf("setting %d", i)})
	}
	return map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1beta1",
		"kind":       "OperatorPolicy",
		"metadata": map[string]any{
			"name": "install-operator", "namespace": "policies", "labels": labels,
			"annotations":       map[string]any{"policy.open-cluster-management.io/description": "Installs <the operator> & keeps it \"current\"\n"},
			"creationTimestamp": nil, "generation": 3,
		},
		"spec": map[string]any{
			"remediationAction": "enforce", "severity": "high", "complianceType": "musthave",
			"operatorGroup": map[string]any{"name": "og", "namespace": "operators", "targetNamespaces": []any{"a", "b", "c"}},
			"subscription": map[string]any{
				"channel": "stable-v1", "name": "my-operator", "namespace": "operators", "source": "redhat-operators",
				"sourceNamespace": "openshift-marketplace", "startingCSV": "my-operator.v1.2.3",
				"config": map[string]any{"env": env, "resources": map[string]any{"limits": map[string]any{"cpu": 0.5, "memory": "512Mi"}}},
			},
			"versions":         []any{"my-operator.v1.2.3", "my-operator.v1.2.4", "my-operator.v1.3.0"},
			"upgradeApproval":  "Automatic",
			"removalBehavior":  map[string]any{"operatorGroups": "DeleteIfUnused", "subscriptions": "Delete", "clusterServiceVersions": "Delete", "customResourceDefinitions": "Keep"},
			"complianceConfig": map[string]any{"catalogSourceUnhealthy": "Compliant", "deploymentsUnavailable": "NonCompliant", "upgradesAvailable": "Compliant", "deprecationsPresent": "Compliant"},
			"replicas":         3, "paused": false, "priority": -12,
		},
		"status": map[string]any{},
	}
}

func BenchmarkNodeFromJSON(b *testing.B) {
	raw, err := json.Marshal(benchmarkObject())
	if err != nil {
		b.Fatal(err)
	}
	for _, reader := range []struct {
		name         string
		nodeFromJSON func([]byte) (*yaml.Node, error)
	}{{"scanner", NodeFromJSON}, {"token walk", nodeFromJSONTokens}} {
		b.Run(reader.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reader.nodeFromJSON(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
