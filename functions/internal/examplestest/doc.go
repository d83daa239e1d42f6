// Package examplestest runs the examples users copy, examples/kustomize and
// examples/kpt, with the real tools and as their READMEs tell users to:
//
//   - the four KRM functions are built and put in bin/ of a temporary copy of
//     the repository layout that holds the examples, so the exec paths the
//     examples name (relative to a kustomization's directory for kustomize, to
//     the working directory for kpt) are the ones under test; nothing is
//     written to the repository;
//   - `kustomize build --enable-alpha-plugins --enable-exec` (the repository's
//     bin/kustomize) of examples/kustomize is compared with
//     testdata/kustomize-build.yaml, and must print nothing on stderr; the
//     README's recipe for emitting a RolloutPlan is checked;
//   - `kpt fn render --allow-exec examples/kpt` (kpt from PATH), run from the
//     root of the copy as the READMEs say, must leave the package equal to
//     testdata/kpt-render/, and a second render must change nothing; the README's `kpt fn eval --exec` lines run on the
//     rendered package, show what the README says and change nothing;
//   - both examples hold the same fleet and render the same objects for the
//     hub;
//   - broken inputs (a dependency cycle, a denied placement, an unknown rollout
//     strategy) fail both tools with the function's message on stderr:
//     kustomize prints no objects and kpt leaves the package as it was. While
//     plan-rollout's failure is hidden by kpt (the plans it adds carry no path
//     annotation, and kpt rejects them before showing its stderr), that case
//     is skipped under kpt with the reason.
//
// `go test ./functions/internal/examplestest/ -update` rewrites the golden
// files from the actual output. A test that needs kustomize or kpt fails when
// the tool is missing and CI is "true", and is skipped with the reason
// otherwise (package krmtest).
//
// The package holds tests only.
package examplestest
