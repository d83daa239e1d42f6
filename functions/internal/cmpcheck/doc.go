// Package cmpcheck decides whether fleetpolicy's Argo CD config management
// plugin (examples/argocd) may hand an app directory to
// `kustomize build --enable-alpha-plugins --enable-exec`.
//
// Contract: Check walks the kustomization in the app directory and every
// local kustomization it reaches through resources, components and bases,
// reads every KRM function config listed under transformers, generators and
// validators (files and inline entries), parses each function spec exactly as
// kustomize does (kyaml's runtimeutil.GetFunctionSpec) and returns a Refusal
// naming the file and the offending value unless every function is an exec
// function whose path, resolved as kustomize resolves it (a bare name on PATH,
// a relative path from the directory of the kustomization that lists it, an
// absolute path; symlinks evaluated), is one of the allowed binaries. It
// refuses container functions, exec envs, remote entries (which it cannot
// read) and directories listed under transformers, generators or validators
// (whose output, and so whose function annotations, only kustomize knows).
// Check reads files; it never runs anything.
package cmpcheck
