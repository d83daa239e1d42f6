package main

import (
	"fmt"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krm"
)

// defaultTimeout bounds the evaluation of one resource.
const defaultTimeout = 10 * time.Second

// Config is the functionConfig (apiVersion fn.fleetpolicy.io/v1alpha1, kind
// CheckPlacement).
type Config struct {
	// Policies are files of placement-policy ConfigMaps, read in addition to
	// the package's, relative to the function's working directory.
	Policies []string `json:"policies,omitempty"`
	// Clusters are files of ManagedClusters (or Lists of them, as `kubectl get
	// managedclusters -o yaml` writes), read in addition to the package's.
	Clusters []string `json:"clusters,omitempty"`
	// Explain adds an info result per resource and cluster, and changes no
	// item (as the --explain flag).
	Explain bool `json:"explain,omitempty"`
	// Timeout bounds the evaluation of one resource, e.g. 30s (default 10s).
	Timeout string `json:"timeout,omitempty"`
}

// readConfig decodes and checks the functionConfig, explaining when explain
// (the flag) is set, and returns it with the timeout it sets; errors name the
// config and the field. The files it names are read with the inputs.
func readConfig(config *fn.KubeObject, explain bool) (Config, time.Duration, error) {
	cfg := Config{Explain: explain}
	if err := krm.DecodeConfig(config, configKind, &cfg); err != nil {
		return cfg, 0, err
	}
	timeout := defaultTimeout
	if cfg.Timeout != "" {
		d, err := time.ParseDuration(cfg.Timeout)
		if err != nil || d <= 0 {
			return cfg, 0, krm.ConfigError(config, field.ErrorList{field.Invalid(field.NewPath("timeout"), cfg.Timeout,
				fmt.Sprintf("%q is not a positive duration such as 30s", cfg.Timeout))})
		}
		timeout = d
	}
	return cfg, timeout, nil
}
