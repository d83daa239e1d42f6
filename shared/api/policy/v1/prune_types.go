package v1

// The values of ConfigurationPolicy spec.pruneObjectBehavior, as OCM spells
// them (the CRD accepts no other).
const (
	// PruneNone deletes nothing when the policy goes (the default).
	PruneNone PruneObjectBehavior = "None"
	// PruneDeleteIfCreated deletes the objects the policy created.
	PruneDeleteIfCreated PruneObjectBehavior = "DeleteIfCreated"
	// PruneDeleteAll deletes every object the policy made or found as it wants it.
	PruneDeleteAll PruneObjectBehavior = "DeleteAll"
)

// Prunes reports whether the behaviour deletes objects: DeleteIfCreated or
// DeleteAll.
func (b PruneObjectBehavior) Prunes() bool { return b == PruneDeleteIfCreated || b == PruneDeleteAll }
