package configpolicy

import (
	"encoding/json"
	"testing"
)

// obj decodes a JSON object for a test case.
func obj(t testing.TB, doc string) map[string]any {
	t.Helper()
	if doc == "" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("bad test object %s: %v", doc, err)
	}
	return m
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
