// Command preview-hub-templates is a KRM function that renders, before a merge,
// what each managed cluster of an exported inventory would get from the hub
// templates ({{hub ... hub}}) of the package's Policies: for every Policy and
// cluster, the replica the hub would write, resolved by the same code the hub
// controller runs (shared/templates.ResolveHubTemplates over go-template-utils)
// reading the package's objects through inventoryClient instead of a hub. The
// replicas are added as local-config items, so they never reach a cluster;
// every other item passes through untouched. README.md documents its use.
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

//go:embed README.md
var readme string

// configKind is the kind of this function's functionConfig.
const configKind = "PreviewHubTemplates"

var previewHubTemplates = krm.Function{Name: "preview-hub-templates", Help: readme, Process: process}

func main() { previewHubTemplates.Main() }

// The template library (go-template-utils v7.3.0, on klog v1) logs every
// failed resolution, template included, to stderr; the function reports them
// as results instead.
func init() {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	_ = flags.Set("logtostderr", "false")
	_ = flags.Set("alsologtostderr", "false")
	_ = flags.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// Config is the functionConfig (apiVersion fn.fleetpolicy.io/v1alpha1, kind
// PreviewHubTemplates).
type Config struct {
	// Policies limits the preview to these Policies, each "name" (in any
	// namespace) or "namespace/name". Empty: every Policy with hub templates.
	Policies []string `json:"policies,omitempty"`
	// Clusters limits the preview to these ManagedClusters of the package.
	// Empty: every one.
	Clusters []string `json:"clusters,omitempty"`
	// Timeout bounds the resolution of one Policy's templates for one
	// cluster, as a duration ("10s", the default; at most 5m).
	Timeout string `json:"timeout,omitempty"`
	// Memory bounds what the resolution of one policy template for one
	// cluster may produce, as a quantity ("4Mi", the default, as the hub's
	// --template-memory; at most 1Gi).
	Memory string `json:"memory,omitempty"`
}

const (
	defaultTimeout = 10 * time.Second
	maxTimeout     = 5 * time.Minute
	maxMemory      = 1 << 30
)

// readConfig decodes and checks the functionConfig; errors name the config
// and the field.
func readConfig(config *fn.KubeObject) (Config, templates.Limits, error) {
	var cfg Config
	if err := krm.DecodeConfig(config, configKind, &cfg); err != nil {
		return cfg, templates.Limits{}, err
	}
	errs := krm.CheckObjectNames(field.NewPath("policies"), cfg.Policies)
	for i, c := range cfg.Clusters {
		if c == "" {
			errs = append(errs, field.Required(field.NewPath("clusters").Index(i), "is empty"))
		}
	}
	timeout := defaultTimeout
	if cfg.Timeout != "" {
		path := field.NewPath("timeout")
		d, err := time.ParseDuration(cfg.Timeout)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(path, cfg.Timeout, fmt.Sprintf("%q is not a duration such as 10s or 1m", cfg.Timeout)))
		case d <= 0 || d > maxTimeout:
			errs = append(errs, field.Invalid(path, cfg.Timeout, fmt.Sprintf("%s is not between 0s and %s", d, maxTimeout)))
		default:
			timeout = d
		}
	}
	limits := templates.Limits{Timeout: timeout, TimeoutSetting: "timeout in the functionConfig",
		MemorySetting: "memory in the functionConfig"}.OrDefault()
	if cfg.Memory != "" {
		path := field.NewPath("memory")
		q, err := resource.ParseQuantity(cfg.Memory)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(path, cfg.Memory, fmt.Sprintf("%q is not a quantity such as 4Mi", cfg.Memory)))
		case q.Value() <= 0 || q.Value() > maxMemory:
			errs = append(errs, field.Invalid(path, cfg.Memory, fmt.Sprintf("%s is not between 0 and 1Gi", cfg.Memory)))
		default:
			limits.Memory = q.Value()
		}
	}
	if len(errs) > 0 {
		return cfg, templates.Limits{}, krm.ConfigError(config, errs)
	}
	return cfg, limits, nil
}
