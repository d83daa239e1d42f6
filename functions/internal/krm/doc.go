// Package krm is the thin adapter kit every KRM function of this repository is
// built on (validate-dependencies, plan-rollout, expand-operator-policy,
// check-placement). It speaks the KRM Functions Specification
// (config.kubernetes.io/v1 ResourceList on stdin and stdout) on top of the kpt
// function SDK's object model (fn.ResourceList, fn.KubeObject, fn.Result).
//
// Contract:
//
//   - Function.Run reads one ResourceList, calls Process, and writes the
//     ResourceList back with its items in the order Process left them. Items
//     are written from their own YAML nodes: an item Process did not touch comes
//     out exactly as it came in (comments, field order, quoting), so an input
//     encoded the way kustomize and kpt encode (two-space indent, compact
//     sequences, folded scalars on one line) passes through byte for byte.
//     The exception is a scalar the YAML encoder would write with another
//     value, or as text no parser reads (a folded scalar with a more-indented
//     line, a block scalar starting with a tab): it is written in a style that
//     keeps its value (literal, or double-quoted).
//   - The functionConfig is not echoed. Results are written under results, in
//     the order Process appended them.
//   - Every error and warning result is also written to stderr, one line each,
//     prefixed with the function's name, because kustomize shows nothing but
//     stderr. The exit code is 1 when any result is an error (kustomize and kpt
//     both pass a function that reports errors but exits 0), 0 otherwise.
//   - Input that is not a ResourceList, holds a key twice at its top level or
//     at its functionConfig's (a second items: would replace the first), or
//     is larger than MaxResourceListBytes (512 MiB), yields an error result,
//     an empty item list and exit code 1; nothing panics on bad input. Files a
//     function reads are bounded the same way (ReadAtMost).
//   - An item of a kind the function does not read (Function.Reads) that
//     holds a YAML alias is kept from Process and written back in its place
//     as it came: an unrelated item never fails a function. AnnotationOf and
//     MetadataOf read other items following aliases.
//   - A panic of Process is answered like bad input: the items are written as
//     they came in, with an error result for each item of a kind it reads
//     holding a YAML alias (naming the alias's field: the kpt SDK's accessors
//     panic on aliases, kpt-functions-sdk v1.1.0), or else one for the panic,
//     and exit code 1.
//     A goroutine Process starts must not panic: only Process's own is
//     recovered.
//   - functionConfigs are objects of apiVersion fn.fleetpolicy.io/v1alpha1 with
//     their fields at the top level, as kpt's own configs (DecodeConfig). The
//     absence of a config, and kpt's placeholder ConfigMap, mean defaults.
//     A function checks its config's fields into a field.ErrorList
//     (CheckObjectNames and SelectNamed check lists of names) and returns
//     ConfigError of it, which fails the run naming the config and each
//     field.
//   - Process must leave alone the items it does not own. Orchestrators put
//     their own items in the list (kpt: the Kptfile and function configs;
//     kustomize: generator configs marked config.kubernetes.io/local-config) and
//     annotations on every item (internal.config.kubernetes.io/*,
//     config.kubernetes.io/{path,index}, config.k8s.io/id,
//     kustomize.config.k8s.io/id): never edit them. Skip local-config items
//     with the method item.IsLocalConfig(); the SDK's function fn.IsLocalConfig
//     returns true for every object (v1.1.0).
//
// Conversions never write a YAML text to parse it again, the costliest thing a
// function can do at 10,000 objects: Node gives an item's own YAML node,
// MarshalJSON and Decode read an item through its JSON form straight from its
// nodes, Object gives an item's JSON form as a map (in one walk of the nodes of
// a plain Kubernetes object), NodeFromJSON makes the nodes of a typed object
// from its JSON form, and Run writes the list in batches of documents (see
// writeResourceList).
//
// Files, each owning one responsibility; a file uses another's unexported
// names only in the direction listed, never both ways
// (TestFilesDependOneWay):
//
//   - function.go: Function, its Main (arguments and Flags) and Run, which
//     ties reading, Process and writing together; uses recover.go and
//     write.go.
//   - read.go: reading the ResourceList stream: the size bound (ReadAtMost)
//     and ParseResourceList with its check for keys given twice, scanning the
//     top-level keys from the text's lines.
//   - write.go: writing the ResourceList in batches of documents; uses
//     scalar_style.go (restyling scalars the encoder gets wrong), result.go
//     (resultNode) and node.go.
//   - recover.go: keeping items Process does not read from it, and answering
//     a panic of Process; uses node.go.
//   - node.go: the node model: an item's own node (Node), reading fields
//     through YAML aliases (AnnotationOf, MetadataOf, HoldsAlias, firstAlias)
//     and the key node every writer makes.
//   - result.go: results (ObjectResult, FormatResult) and their YAML nodes;
//     uses node.go.
//   - plain.go: what plain YAML is, the YAML whose JSON form is read straight
//     from its nodes; used by object.go and marshal.go.
//   - marshal.go: an item's JSON text (MarshalJSON); uses plain.go.
//   - object.go: an item's JSON form as a map (Object); uses plain.go.
//   - decode.go: typed decoding (Decode: a value that does not decode is a
//     field.Error naming its field) through the JSON text of marshal.go;
//     uses locate.go.
//   - locate.go: the decode-error locator, which finds the field behind a
//     decoding error with its list indices, also one a type's own JSON
//     decoding reports without the field (a duration, a time).
//   - config.go: functionConfigs: DecodeConfig, and ConfigError, the one
//     error every function returns for its config's field errors; uses
//     decode.go.
//   - fielderrors.go: field errors as results (FieldResult, ErrorResults,
//     Unreadable); uses result.go.
//   - nodefromjson.go: the YAML nodes of a JSON text (NodeFromJSON), its own
//     scanner.
//   - changedkeys.go: which keys of a map (an item's annotations) a change
//     sets and removes (ChangedKeys).
//   - annotations.go, selectnamed.go: helpers of the functions' own rules
//     (orchestrator annotations, names in a functionConfig's lists).
//
// One error vocabulary: shared/ reports "this field of this object is wrong" as
// apimachinery field errors (field.Error, field.ErrorList), and Decode does too.
// A function turns them into results in one way: FieldResult (the error's path
// as the result's field, its body as the message), ErrorResults for any error
// (field errors found through errors.Join and aggregates), and Unreadable for
// an item that cannot be decoded as its kind ("cannot be read: " and why).
//
// The golden-test helper and the helpers that run a function through the real
// kustomize and kpt binaries live in the sibling package krmtest.
package krm
