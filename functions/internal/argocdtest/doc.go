// Package argocdtest tests fleetpolicy's Argo CD config management plugin
// (examples/argocd) without Argo CD, by doing with it what argocd-cmp-server
// (Argo CD v3.2) does for a manifest request:
//
//   - plugin.yaml is read with the fields Argo CD knows (strictly here, so that
//     a misspelt key, which Argo CD silently ignores, fails) and validated as
//     Argo CD validates it;
//   - the repository reaches the sidecar as a fresh copy in which every file is
//     0644 and every directory 0755 (unless preserveFileMode);
//   - discover's find command, then init and generate, run in the
//     Application's path inside that copy, exec'd directly (no shell of the
//     emulator's own), with the sidecar's environment followed by what the repo
//     server sends: the ARGOCD_APP_* build variables, KUBE_VERSION and
//     KUBE_API_VERSIONS, the Application's plugin env as ARGOCD_ENV_<name>
//     (with $VAR interpolation from the build variables), and its parameters as
//     ARGOCD_APP_PARAMETERS JSON and PARAM_* variables;
//   - generate's stdout must split into Kubernetes objects; a failing command
//     fails the request and its stderr is what the user sees.
//
// The sidecar's PATH holds what the sidecar image (hack/imagebuild) installs
// and nothing else: every KRM function of functions/ and
// fleetpolicy-cmp-generate, whose subcommands are all the plugin's commands
// (built by the test, into one directory as the image installs them), and the
// repository's bin/kustomize (`make kustomize`). It has no shell and no shell
// tool, as the image has none, so a plugin command that needed one would fail
// here. Tests that need kustomize fail when it is missing and CI is "true",
// and are skipped with the reason otherwise.
//
// The package holds tests only.
package argocdtest
