package krm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// objectHeader starts every object of objectCases.
const objectHeader = "apiVersion: v1\nkind: T\n"

// objectCases are objects (after objectHeader) whose YAML
// resolves in every way YAML lets it. want is the JSON of the object Object
// returns, without apiVersion and kind; wantErr is its error. plain says
// whether the object is read in one walk of its nodes, not decoded by YAML.
var objectCases = []struct {
	name    string
	yaml    string
	plain   bool
	want    string
	wantErr string
}{
	{name: "a Kubernetes object", plain: true,
		yaml: "metadata:\n  name: p # comment\n  annotations: {a: \"1\", b: \"true\"}\nspec:\n  disabled: false\n" +
			"  policy-templates:\n  - objectDefinition: {kind: ConfigurationPolicy, spec: {severity: low}}\n  replicas: 3\n",
		want: `{"metadata":{"annotations":{"a":"1","b":"true"},"name":"p"},"spec":{"disabled":false,"policy-templates":[{"objectDefinition":{"kind":"ConfigurationPolicy","spec":{"severity":"low"}}}],"replicas":3}}`},
	{name: "decimal integers", plain: true,
		yaml: "ints: [0, 7, -12, 9007199254740993, 9223372036854775807, 18446744073709551615, 123456789012345678901234567890]\n",
		want: `{"ints":[0,7,-12,9007199254740992,9223372036854776000,18446744073709552000,1.2345678901234568e+29]}`},
	{name: "an integer too big for a float is a string", plain: true,
		yaml: "big: 1" + strings.Repeat("0", 400) + "\n", want: `{"big":"1` + strings.Repeat("0", 400) + `"}`},
	{name: "integers in other bases", yaml: "ints: [010, 0o17, 0x1F, 1_000, 0b101, +5, -0b11]\n",
		want: `{"ints":[8,15,31,1000,5,5,-3]}`},
	{name: "minus zero", plain: true, yaml: "int: -0\nfloat: -0.0\n", want: `{"float":-0,"int":0}`},
	{name: "!!int too big for a uint64", yaml: "a: !!int 123456789012345678901234567890\n", wantErr: "cannot decode !!float `123456789012345678901234567890` as a !!int"},
	{name: "!!float of an integer only a uint64 holds", yaml: "a: !!float 18446744073709551615\n", wantErr: "cannot decode !!int `18446744073709551615` as a !!float"},
	{name: "!!float of a small integer", plain: true, yaml: "a: !!float 42\n", want: `{"a":42}`},
	{name: "floats", plain: true, yaml: "floats: [1.5, -0.25, 1e3, 1E-3, .5, 5., 5.e3, 2.5e+10, -1e-400, 1e400, 0.1e1]\n",
		want: `{"floats":[1.5,-0.25,1000,0.001,0.5,5,5000,25000000000,-0,"1e400",1]}`},
	{name: "infinity", yaml: "spec:\n  inf: .inf\n", wantErr: "json: unsupported value: +Inf"},
	{name: "not a number", yaml: "spec: [1, .NaN]\n", wantErr: "json: unsupported value: NaN"},
	{name: "the first bad value in key order", yaml: "b: .nan\na: {y: [-.Inf], x: {1: one}}\n",
		wantErr: "json: unsupported type: map[interface {}]interface {}"},
	{name: "null in every spelling", plain: true, yaml: "a: null\nb: ~\nc:\nd: Null\ne: NULL\nf: [~, ]\n",
		want: `{"a":null,"b":null,"c":null,"d":null,"e":null,"f":[null]}`},
	{name: "booleans: YAML 1.2's spellings, and YAML 1.1's as strings", plain: true,
		yaml: "a: true\nb: True\nc: TRUE\nd: false\ne: False\nf: FALSE\ng: yes\nh: no\ni: on\nj: off\nk: y\nl: N\n",
		want: `{"a":true,"b":true,"c":true,"d":false,"e":false,"f":false,"g":"yes","h":"no","i":"on","j":"off","k":"y","l":"N"}`},
	{name: "quoted scalars are strings", plain: true,
		yaml: "a: \"1\"\nb: '2.5'\nc: \"true\"\nd: 'null'\ne: \"\"\nf: \"2024-01-02\"\ng: |\n  two\n  lines\nh: >-\n  folded\n  text\n",
		want: `{"a":"1","b":"2.5","c":"true","d":"null","e":"","f":"2024-01-02","g":"two\nlines\n","h":"folded text"}`},
	{name: "timestamps", yaml: "t: 2024-01-02T03:04:05Z\nd: 2024-01-02\ns: 2001-12-14 21:59:43.10\nz: 2024-01-02t03:04:05.5+01:30\n",
		want: `{"d":"2024-01-02T00:00:00Z","s":"2001-12-14T21:59:43.1Z","t":"2024-01-02T03:04:05Z","z":"2024-01-02T03:04:05.5+01:30"}`},
	{name: "a timestamp JSON cannot hold", yaml: "t: 2024-01-02T03:04:05+24:00\n",
		wantErr: "json: error calling MarshalJSON for type time.Time: Time.MarshalJSON: timezone hour outside of range [0,23]"},
	{name: "binary", yaml: "text: !!binary aGVsbG8=\nbytes: !!binary //4=\n", want: "{\"bytes\":\"\ufffd\ufffd\",\"text\":\"hello\"}"},
	{name: "bad binary", yaml: "b: !!binary '%%'\n", wantErr: "yaml: !!binary value contains invalid base64 data"},
	{name: "keys that become one with invalid UTF-8 replaced", yaml: "!!binary /w==: ff\n!!binary /g==: fe\n\"\\uFFFD\": valid\n",
		want: "{\"\ufffd\":\"ff\"}"},
	{name: "explicit tags", yaml: "a: !!str 12\nb: !!int \"12\"\nc: !!float 12\nd: !custom text\ne: ! 12\nf: !!str\n",
		want: `{"a":"12","b":12,"c":12,"d":"text","e":12,"f":""}`},
	{name: "a value its tag does not fit", yaml: "a: !!int abc\n", wantErr: "yaml: cannot decode !!str `abc` as a !!int"},
	{name: "anchors and aliases", yaml: "base: &base\n  a: 1\n  b: [x, &y y]\ncopy: *base\nlist: [*y, &item {k: v}, *item]\n",
		want: `{"base":{"a":1,"b":["x","y"]},"copy":{"a":1,"b":["x","y"]},"list":["y",{"k":"v"},{"k":"v"}]}`},
	{name: "an anchor without an alias", plain: true, yaml: "a: &x {k: v}\n", want: `{"a":{"k":"v"}}`},
	{name: "an alias of itself", yaml: "a: &a [*a]\n", wantErr: "yaml: anchor 'a' value contains itself"},
	{name: "merge keys", yaml: "base: &base {a: 1, b: 2}\nmore: &more {c: 3}\none: {<<: *base, b: 20}\nmany: {<<: [*base, *more], a: 10}\n",
		want: `{"base":{"a":1,"b":2},"many":{"a":10,"b":2,"c":3},"more":{"c":3},"one":{"a":1,"b":20}}`},
	{name: "a merge key without a map", yaml: "m: {<<: 1}\n", wantErr: "yaml: map merge requires map or sequence of maps as the value"},
	{name: "a quoted << is a key", yaml: "m: {\"<<\": x}\n", want: `{"m":{"\u003c\u003c":"x"}}`},
	{name: "nested lists", plain: true, yaml: "l: [[1, [2, [3, []]]], [], {}, [{a: [b]}]]\n",
		want: `{"l":[[1,[2,[3,[]]]],[],{},[{"a":["b"]}]]}`},
	{name: "keys that are not strings, at the top", yaml: "1: one\ntrue: yes\n2024-01-02: date\n~: dropped\n",
		want: `{"1":"one","2024-01-02":"date","true":"yes"}`},
	{name: "a list as a key, at the top", yaml: "[a]: list\n", wantErr: "cannot unmarshal !!seq into string"},
	{name: "a key that is not a string, inside", yaml: "spec:\n  1: one\n", wantErr: "json: unsupported type: map[interface {}]interface {}"},
	{name: "a duplicate key", yaml: "spec:\n  a: 1\n  a: 2\n", wantErr: `mapping key "a" already defined`},
	{name: "unicode and characters JSON escapes", plain: true, yaml: "s: \"é \\u2028 <&> \\t \\0 \\x7f\"\n",
		want: "{\"s\":\"é \\u2028 \\u003c\\u0026\\u003e \\t \\u0000 \x7f\"}"},
}

func TestObjectIsJSONUnmarshalOfMarshalJSON(t *testing.T) {
	for _, tc := range objectCases {
		t.Run(tc.name, func(t *testing.T) {
			doc := objectHeader + tc.yaml
			got, err := Object(parseObject(t, doc))
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want one containing %q", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("unexpected error: %v", err)
			default:
				delete(got, "apiVersion")
				delete(got, "kind")
				if text, _ := json.Marshal(got); string(text) != tc.want {
					t.Errorf("got\n %s\nwant\n %s", text, tc.want)
				}
			}
			if _, plain := plainJSON(Node(parseObject(t, doc))); plain != tc.plain {
				t.Errorf("read in one walk: %v, want %v", plain, tc.plain)
			}
			sameObjectAsThroughJSON(t, []byte(doc))
		})
	}
}

func FuzzDecodeObject(f *testing.F) {
	for _, tc := range objectCases {
		f.Add([]byte(objectHeader + tc.yaml))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameObjectAsThroughJSON(t, doc)
	})
}

// sameObjectAsThroughJSON checks that Object gives of the object doc what
// json.Unmarshal gives of its MarshalJSON, the error included.
func sameObjectAsThroughJSON(t *testing.T, doc []byte) {
	t.Helper()
	if _, err := fn.ParseKubeObject(doc); err != nil {
		return
	}
	want, wantErr := objectThroughJSON(parseObject(t, string(doc)))
	got, err := Object(parseObject(t, string(doc)))
	switch {
	case (err == nil) != (wantErr == nil):
		t.Fatalf("Object error %v, through JSON %v", err, wantErr)
	case err != nil:
		if err.Error() != wantErr.Error() {
			t.Errorf("Object error\n %s\nthrough JSON\n %s", err, wantErr)
		}
	// %#v shows the types, and tells -0 from 0; it prints maps sorted by key.
	case fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want):
		t.Errorf("Object\n %#v\nthrough JSON\n %#v", got, want)
	}
}

// objectThroughJSON is what Object replaces: obj written as JSON and read back.
func objectThroughJSON(obj *fn.KubeObject) (map[string]any, error) {
	raw, err := MarshalJSON(obj)
	if err != nil {
		return nil, err
	}
	var object map[string]any
	return object, json.Unmarshal(raw, &object)
}

func parseObject(t testing.TB, doc string) *fn.KubeObject {
	t.Helper()
	obj, err := fn.ParseKubeObject([]byte(doc))
	if err != nil {
		t.Fatalf("parsing %q: %v", doc, err)
	}
	return obj
}

// BenchmarkObject compares Object with the JSON round trip it replaces, on an
// object like the root Policies check-placement reads by the thousand.
func BenchmarkObject(b *testing.B) {
	obj := parseObject(b, objectHeader+objectCases[0].yaml)
	for name, object := range map[string]func(*fn.KubeObject) (map[string]any, error){
		"Object": Object, "through JSON": objectThroughJSON,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := object(obj); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
