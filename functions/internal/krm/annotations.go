package krm

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
)

// IsOrchestratorAnnotation reports whether key is one of the annotations kpt
// and kustomize put on items for their own bookkeeping (a file's path and
// index, ids, kustomize's build annotations): never the user's, and never to
// be copied into an object a function makes.
func IsOrchestratorAnnotation(key string) bool {
	for _, prefix := range []string{"internal.config.kubernetes.io/", "config.k8s.io/", "kustomize.config.k8s.io/"} {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return key == kioutil.LegacyPathAnnotation || key == kioutil.LegacyIndexAnnotation
}
