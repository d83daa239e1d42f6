// Package hubtoken keeps the spoke's hub credentials short-lived: when the
// spoke reaches the hub as a ServiceAccount with a bearer token, Renewing
// makes it request a new bound, expiring token for that ServiceAccount
// (TokenRequest, authenticated with the token it holds) before the one it
// holds expires, so the hub never has to hand out a non-expiring token
// Secret. The first token is a short bootstrap token (`kubectl create token`);
// a spoke that was stopped for longer than a token's lifetime needs a new one.
//
// Renewal needs the ServiceAccount's permission to create its own token
// (serviceaccounts/token, create, on its own name: manifests/spoke/hub). A
// failed renewal is logged and retried a minute later while the token held is
// still in use.
package hubtoken
