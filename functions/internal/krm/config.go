package krm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// APIVersion is the apiVersion of the functionConfigs of this repository's
// functions.
const APIVersion = "fn.fleetpolicy.io/v1alpha1"

// DecodeConfig decodes the functionConfig config into cfg, a pointer to the
// struct of the config's top-level fields (apiVersion, kind and metadata are not
// decoded). Unknown fields are refused. A missing config, or kpt's placeholder
// (a ConfigMap without data, which kpt fn eval passes when given no config),
// leaves cfg as it is. Any other config must have apiVersion
// fn.fleetpolicy.io/v1alpha1 and the given kind. Errors name the config and the
// field, as ConfigError does.
func DecodeConfig(config *fn.KubeObject, kind string, cfg any) error {
	if config == nil || config.IsEmpty() || isKptPlaceholder(config) {
		return nil
	}
	if config.GetAPIVersion() != APIVersion || config.GetKind() != kind {
		return fmt.Errorf("%s: apiVersion %q and kind %q are not supported: want apiVersion %s, kind %s",
			configName(config), config.GetAPIVersion(), config.GetKind(), APIVersion, kind)
	}
	node := config.CopyToResourceNode()
	for _, key := range []string{"apiVersion", "kind", "metadata"} {
		if err := node.PipeE(yaml.Clear(key)); err != nil {
			return fmt.Errorf("%s: %w", configName(config), err)
		}
	}
	err := decodeJSON(node.YNode(), cfg, true)
	var fieldErr *field.Error
	if errors.As(err, &fieldErr) {
		return ConfigError(config, field.ErrorList{fieldErr})
	}
	if err != nil {
		return fmt.Errorf("%s: %w", configName(config), err)
	}
	return nil
}

// ConfigError is the error of the functionConfig config whose fields errs
// are wrong, nil when errs is empty: one line naming the config and each
// field with its detail,
// `functionConfig <Kind> "<name>": <field>: <detail>; <field>: <detail>`.
// Every function checks its config's fields into a field.ErrorList and
// returns this error, which fails the whole run.
func ConfigError(config *fn.KubeObject, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	problems := make([]string, len(errs))
	for i, e := range errs {
		detail := e.Detail
		if detail == "" {
			detail = e.ErrorBody()
		}
		problems[i] = e.Field + ": " + detail
	}
	return errors.New(configName(config) + ": " + strings.Join(problems, "; "))
}

// configName names the functionConfig config in errors:
// `functionConfig <Kind> "<name>"`.
func configName(config *fn.KubeObject) string {
	if config == nil {
		return "functionConfig"
	}
	return fmt.Sprintf("functionConfig %s %q", config.GetKind(), config.GetName())
}

func isKptPlaceholder(config *fn.KubeObject) bool {
	if config.GetAPIVersion() != "v1" || config.GetKind() != "ConfigMap" {
		return false
	}
	data, _, _ := config.NestedStringMap("data")
	return len(data) == 0
}
