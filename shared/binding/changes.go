package binding

// ChangedClusters returns, sorted, the clusters whose binding or effective
// remediationAction differs between the before and after resolutions of one policy:
// clusters bound in only one of them, and clusters bound in both with a different
// RemediationAction. Only their replicas need reconciling. A nil resolution binds
// nothing. It walks both sorted cluster lists once.
func ChangedClusters(before, after *Resolution) []string {
	var old, cur []BoundCluster
	if before != nil {
		old = before.Clusters
	}
	if after != nil {
		cur = after.Clusters
	}
	var changed []string
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(old) && old[i].Name < cur[j].Name):
			changed = append(changed, old[i].Name)
			i++
		case i == len(old) || cur[j].Name < old[i].Name:
			changed = append(changed, cur[j].Name)
			j++
		default:
			if old[i].RemediationAction != cur[j].RemediationAction {
				changed = append(changed, cur[j].Name)
			}
			i++
			j++
		}
	}
	return changed
}
