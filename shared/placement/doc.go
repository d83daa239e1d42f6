// Package placement is the policy-based placement engine (Rego or CEL placement
// policies in ConfigMaps, README "Placement policies"), applied to the fleet:
// the resources placed are root Policies and Placements, the clusters are
// ManagedClusters. The hub's admission webhook and remediator and the
// check-placement KRM function are its adapters. The package does no I/O and reads no clock.
//
// Contract:
//
//   - Placement policies are ConfigMaps in namespace fleetpolicy-placement
//     labelled fleetpolicy.io/placement-policy: rego or cel (IsPolicy). Every
//     entry of data is one policy of that language; binaryData is an error.
//   - A Rego policy is a Rego v1 module of package fleetpolicy.placement. It
//     may define annotations (an object of annotation to value; a value that is
//     not a string is written as JSON), errors (a set of messages) and, for
//     explanations, excluded (an object of cluster name to a reason or a set of
//     reasons). It reads input (the resource) and data.clusters[<name>] =
//     {"labels": {...}, "claims": {...}}, claims being the ManagedCluster's
//     status.clusterClaims by name. Built-ins that reach the network, the clock
//     or randomness (those OPA marks nondeterministic, such as http.send,
//     time.now_ns, rand.intn and json.match_schema, and
//     providers.aws.sign_req and crypto.x509.parse_and_verify_certificates)
//     do not compile.
//   - A CEL policy is a CELPolicy document (YAML or JSON): when (bool over
//     object), variables (over object and variables), match (per-cluster bool
//     conditions over object, variables and cluster = {"name", "labels",
//     "claims"}, each with a message for the clusters it excludes), errors
//     (bool conditions over object, variables and selected, the sorted names of
//     the clusters match selects, each with a message) and annotations (string
//     expressions over the same). With match, the policy sets
//     placement.fleetpolicy.io/clusters to the selected clusters. CEL has the
//     optional-types syntax and the strings and sets extensions; every
//     expression evaluation is bounded by a cost limit of 1,000,000.
//   - The result of all policies, evaluated in order of ConfigMap name then
//     data key: their annotations, to merge into the resource with the
//     policies' values winning (Result.Apply); placement.fleetpolicy.io/
//     clusters (comma-separated, sorted names; present and empty means no
//     cluster) is the intersection of the values of the policies that set it.
//     Two policies setting another annotation to different values is an error.
//     Errors, any of which denies the resource, carry the policy's ID.
//   - Explain adds a Decision per cluster of the inventory: allowed when every
//     policy that sets placement.fleetpolicy.io/clusters lists it (with each
//     policy's reasons), else, when none does, when the resource's own
//     placement.fleetpolicy.io/clusters lists it, else always; a denied
//     resource goes nowhere.
//   - Evaluator.Load takes the whole set of ConfigMaps and swaps in the new
//     policies atomically; a policy whose text did not change is not compiled
//     again. It returns each policy ConfigMap's Status, whose Annotation is the
//     value of fleetpolicy.io/placement-policy-status: {"status":"ok"} or
//     {"status":"error","error":"<key>: <compile error>..."}. A policy that
//     does not compile stays loaded and makes every evaluation fail, so that
//     callers fail closed while it is broken; HasPolicies says whether any
//     policy ConfigMap exists (fail open when none does).
//   - The inventory (SetClusters, PutCluster, DeleteCluster) is kept by each
//     engine in the form its compiled policies read (OPA's in-memory store for
//     Rego, CEL values for CEL): changing it compiles nothing.
//   - A Rego policy's verdict depends only on the input and the inventory.
//     When a policy reads the input only through paths from its root
//     (input.metadata.annotations, object.get(input, [...], default)), the
//     engine memoizes its verdicts by the values at those paths until the
//     inventory changes: resources that ask the same (a fleet's Policies with
//     the same placement annotations) are evaluated once. A policy that reads
//     the input otherwise (the input as a whole, `with input`) is evaluated
//     every time. CEL policies are evaluated every time.
//   - A Rego evaluation may allocate at most RegoMemoryBudget (64 MiB): past
//     it, the evaluation stops with ErrRegoMemoryBudget (numbers.range over
//     millions, strings doubled in a chain of rules, nested comprehensions).
//     sprintf formats whose widths add up to more than 65,536, or take a width
//     from the arguments, are refused: fmt pads in one call nothing can stop.
//     This replaces OPA's sprintf for the whole process that imports the
//     package. CEL policies are bounded by CEL's cost limit.
//   - Evaluation errors (a policy failing at run time, an invalid annotation
//     name) are *PolicyError naming the policy and, when known, the field;
//     evaluation stops with ctx's error when ctx is done, so callers pass their
//     timeout as ctx's deadline.
//
// Engine is the interface of a policy language (NewRegoEngine, NewCELEngine);
// Evaluator combines them.
package placement
