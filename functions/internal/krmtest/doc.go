// Package krmtest holds the test helpers shared by this repository's KRM
// functions (see package krm):
//
//   - golden tests: every directory under a function's testdata/ is one case
//     holding input.yaml (the items, as a stream of YAML documents), an optional
//     config.yaml (the functionConfig) and expected.yaml (the whole output
//     ResourceList). RunGolden runs the function in-process on each case;
//     `go test ./<function>/ -update` rewrites expected.yaml from the actual
//     output.
//   - in-process checks over every case: EachCase; fuzz targets: AddSeeds
//     (the golden cases and the seeds every function shares), FuzzRun,
//     CheckPassedThrough (items a function does not write pass unchanged).
//   - real orchestrators: Orchestrators is the one checker of a function's
//     golden cases through kustomize, kpt fn render and kpt fn eval, in the
//     spirit of kyaml's frameworktestutil: a function names what its output
//     must be (Build, Package; BuildUnchanged, Unchanged and CheckWritten
//     are the common ones) and the checker owns the loop. Beneath it,
//     BuildFunction builds a function's binary into a temporary directory;
//     WriteKustomization and WriteKptPackage lay out a
//     kustomization or a kpt package that runs it; KustomizeBuild, KptRender
//     and KptEval run `kustomize build --enable-alpha-plugins --enable-exec`
//     (the repository's bin/kustomize), `kpt fn render --allow-exec` and
//     `kpt fn eval --exec` (kpt from PATH).
//
// A test that needs kustomize or kpt fails when the tool is missing and the
// environment variable CI is "true", and is skipped with the reason otherwise.
// The repository root is found by walking up from the working directory to
// go.work.
package krmtest
