package localplane

import (
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "github.com/stretchr/testify/require"
	_ "open-cluster-management.io/api/cluster/v1"
	_ "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)
