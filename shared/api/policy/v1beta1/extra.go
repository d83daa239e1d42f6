package v1beta1

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// The CRD keeps keys of spec.subscription and spec.operatorGroup that these
// types lack (x-kubernetes-preserve-unknown-fields, as OCM's free-form
// objects). Decoding keeps them in Extra instead of dropping them, so that
// shared/operatorpolicy can use them (OLM's OperatorGroup fields) or report
// them, and encoding writes them back, so that a typed update never loses them.

// UnmarshalJSON decodes s and keeps the keys Subscription lacks in s.Extra.
func (s *Subscription) UnmarshalJSON(data []byte) error {
	type plain Subscription
	var out plain
	extra, err := decodeKeepingExtra(data, &out)
	if err != nil {
		return err
	}
	*s = Subscription(out)
	s.Extra = extra
	return nil
}

// MarshalJSON encodes s with the keys of s.Extra.
func (s Subscription) MarshalJSON() ([]byte, error) {
	type plain Subscription
	return encodeWithExtra(plain(s), s.Extra)
}

// UnmarshalJSON decodes og and keeps the keys OperatorGroup lacks in og.Extra.
func (og *OperatorGroup) UnmarshalJSON(data []byte) error {
	type plain OperatorGroup
	var out plain
	extra, err := decodeKeepingExtra(data, &out)
	if err != nil {
		return err
	}
	*og = OperatorGroup(out)
	og.Extra = extra
	return nil
}

// MarshalJSON encodes og with the keys of og.Extra.
func (og OperatorGroup) MarshalJSON() ([]byte, error) {
	type plain OperatorGroup
	return encodeWithExtra(plain(og), og.Extra)
}

// decodeKeepingExtra decodes the JSON object data into the struct pointed to
// by into and returns the keys none of its fields is named by (exactly, as the
// API server's decoder matches them), nil when there are none.
func decodeKeepingExtra(data []byte, into any) (map[string]runtime.RawExtension, error) {
	if err := json.Unmarshal(data, into); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return nil, err // null: nothing extra
	}
	known := jsonNames(reflect.TypeOf(into).Elem())
	var extra map[string]runtime.RawExtension
	for key, value := range fields {
		if known[key] {
			continue
		}
		if extra == nil {
			extra = map[string]runtime.RawExtension{}
		}
		extra[key] = runtime.RawExtension{Raw: value}
	}
	return extra, nil
}

// encodeWithExtra encodes v, a struct, as a JSON object with the keys of extra
// its fields do not set.
func encodeWithExtra(v any, extra map[string]runtime.RawExtension) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return data, err
	}
	fields := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	merged := make(map[string]json.RawMessage, len(fields)+len(extra))
	for key, value := range extra {
		raw := value.Raw
		if raw == nil {
			raw = []byte("null")
		}
		merged[key] = raw
	}
	maps.Copy(merged, fields)
	return json.Marshal(merged)
}

// jsonNames are the JSON keys of the fields of struct type t.
func jsonNames(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for i := range t.NumField() {
		field := t.Field(i)
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		if name != "" && name != "-" && field.IsExported() {
			names[name] = true
		}
	}
	return names
}
