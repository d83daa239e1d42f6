package localplane

import (
	"context"
)

// OCMPlacementNamespace is the namespace OCM's placement controller is told it
// runs in (its events go there).
const OCMPlacementNamespace = "open-cluster-management-hub"

// OCMPlacement is OCM's placement controller (bin/ocm-placement, `make
// ocm-placement`) running against a plane: it writes the PlacementDecisions
// of the plane's Placements, as on a real hub.
type OCMPlacement struct {
	*Process
}

// StartOCMPlacement starts OCM's placement controller against p, without
// leader election, serving its metrics on a free local port. Stop ends it.
func StartOCMPlacement(ctx context.Context, p *Plane) (*OCMPlacement, error) {
	if err := EnsureNamespace(ctx, p.Client, OCMPlacementNamespace); err != nil {
		return nil, err
	}
	listen, err := FreeAddress()
	if err != nil {
		return nil, err
	}
	proc, err := StartProcess("ocm-placement", "ocm-placement", []string{"controller", "--kubeconfig", p.KubeconfigPath,
		"--namespace", OCMPlacementNamespace, "--disable-leader-election", "--listen", listen}, nil)
	if err != nil {
		return nil, err
	}
	return &OCMPlacement{Process: proc}, nil
}
