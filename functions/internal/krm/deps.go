package krm

import (
	_ "github.com/kptdev/krm-functions-sdk/go/fn"
	_ "sigs.k8s.io/kustomize/kyaml/kio"
	_ "github.com/stretchr/testify/require"
	_ "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)
