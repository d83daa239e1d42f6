// Package console is fleetpolicy's read-only web console (the
// fleetpolicy-console command): the fleet, each policy, its rollout and
// placement, each cluster, server-rendered with html/template, following the
// fleet live and exporting each table as CSV and JSON. What the pages show is
// computed by package view (pure); this package reads and renders.
//
// # Who reads
//
// Every read is made with the viewer's identity, so the API server's RBAC
// decides what a viewer sees: Options.Identity IdentityKubeconfig reads with
// the console's kubeconfig (one person on a workstation; the command then
// listens on loopback only), IdentityToken with each request's bearer token
// (an Authorization header, as an authenticating proxy sends it, or the token
// given on /login, kept in an HttpOnly, SameSite=Strict cookie) and never with
// the console's own credentials (rest.AnonymousClientConfig plus the token).
// A page the API server refuses shows the refusal, with its status code, and
// nothing else.
//
// # Reads and bounds
//
// The fleet, policy, rollout and placement pages read root Policies and
// PolicySets from an informer cache per viewer and namespace scope (viewers):
// started on a viewer's first page of that scope once the API server said the
// viewer may list there, confirmed again when that answer is older than
// Options.Recheck (a right revoked drops the cache), at most
// Options.MaxScopes per viewer and Options.MaxViewers viewers (least recently
// used dropped), each dropped after Options.ViewerIdle unused. A page never
// lists the replicas of the world: the per-cluster lines come from the root's
// status, a replica is read by name (a cluster's templates and history; why
// a cluster is Pending, for at most 10 clusters of a policy page), a
// cluster's page lists its own namespace, and every direct list (Events,
// PlacementDecisions, a cluster's replicas, a rollout's replicas for their own
// status.rolloutStatus) reads at most Options.MaxReads objects. Tables are
// paginated (?page=, ?size= up to Options.MaxPageSize). At most
// Options.MaxInFlight requests are served at once (429 beyond), each within
// Options.RequestTimeout.
//
// # What it serves
//
// GET only, besides POST /login and /logout (which set and clear the cookie
// and write nothing to the API server, and which a browser may send only
// from the console's own pages: a POST whose Sec-Fetch-Site, or without it
// whose Origin, names another origin is refused with 403, so that no other
// site can sign a viewer in as someone else): / (the fleet, ?namespace=),
// /policies/{ns}/{name}, .../clusters/{cluster} (a replica's templates and
// history), .../rollout (waves, what holds the next wave back, the reviewed
// RolloutPlan beside the live rollout and the hub's Rollout Events, an SVG
// timeline drawn on the server), .../placement (decisions, and each excluded
// cluster's reason), /clusters/{name}; each with ?export=csv|json&table=<name>.
// Every response carries a Content-Security-Policy allowing only the
// console's own script and style sheet (no inline script, frame-ancestors
// 'none'), X-Frame-Options DENY, X-Content-Type-Options nosniff,
// Referrer-Policy no-referrer and Cache-Control no-store. The one script
// (static/console.js) asks for the page's <main> again every Options.Refresh
// (X-Console-Fragment) and swaps it in; every table reads without it.
package console
