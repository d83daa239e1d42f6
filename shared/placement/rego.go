package placement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// regoPackage is the package every Rego placement policy declares.
var regoPackage = ast.MustParseRef("data.fleetpolicy.placement")

// The queries of a Rego policy: its documents, each as a list that is empty
// when the policy does not define the document.
const (
	regoQuery = `a := [x | x := data.fleetpolicy.placement.annotations]; ` +
		`e := [x | x := data.fleetpolicy.placement.errors]`
	regoExplainQuery = regoQuery + `; r := [x | x := data.fleetpolicy.placement.excluded]`
)

// regoDeniedBuiltins are the built-ins a placement policy cannot call besides
// those OPA marks nondeterministic (http.send, net.lookup_ip_addr,
// opa.runtime, time.now_ns, rand.intn, uuid.rfc4122, io.jwt.decode_verify,
// io.jwt.encode_sign and encode_sign_raw, json.verify_schema and
// match_schema, whose schemas may be fetched): they reach the network, the
// clock or randomness too, and placement must be decided from the resource
// and the inventory alone (the engine memoizes verdicts on that).
var regoDeniedBuiltins = map[string]bool{
	"providers.aws.sign_req": true, // signs with the time
	// verify certificates at the current time
	"crypto.x509.parse_and_verify_certificates":              true,
	"crypto.x509.parse_and_verify_certificates_with_options": true,
}

// regoEngine runs Rego v1 policies with the inventory in an in-memory store
// (data.clusters) that every prepared query reads, so that inventory changes
// need no new preparation.
type regoEngine struct {
	store        storage.Store
	capabilities *ast.Capabilities
	// generation counts the inventories the store has held; a memoized
	// verdict is valid for its generation only.
	generation atomic.Uint64
}

// NewRegoEngine returns the engine of Rego placement policies.
func NewRegoEngine() Engine {
	caps := ast.CapabilitiesForThisVersion()
	allowed := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if !b.IsNondeterministic() && !regoDeniedBuiltins[b.Name] {
			allowed = append(allowed, b)
		}
	}
	caps.Builtins = allowed
	caps.AllowNet = []string{}
	return &regoEngine{
		store:        inmem.NewFromObjectWithOpts(map[string]any{"clusters": map[string]any{}}, inmem.OptReturnASTValuesOnRead(true)),
		capabilities: caps,
	}
}

func (e *regoEngine) Compile(ctx context.Context, id PolicyID, text string) (Program, error) {
	module, err := ast.ParseModuleWithOpts(id.Key, text, ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: e.capabilities})
	if err != nil {
		return nil, regoErrors(err)
	}
	if !module.Package.Path.Equal(regoPackage) {
		return nil, fmt.Errorf("%s: the policy is package %v, want package fleetpolicy.placement",
			module.Package.Location, module.Package.Path)
	}
	compiler := ast.NewCompiler().WithCapabilities(e.capabilities)
	if compiler.Compile(map[string]*ast.Module{id.Key: module}); compiler.Failed() {
		return nil, regoErrors(compiler.Errors)
	}
	prepare := func(query string) (rego.PreparedEvalQuery, error) {
		return rego.New(rego.Query(query), rego.Compiler(compiler), rego.Store(e.store),
			rego.Capabilities(e.capabilities)).PrepareForEval(ctx)
	}
	p := &regoProgram{id: id, engine: e}
	if reads, ok := regoInputReads(module); ok {
		p.memo = &verdictMemo{reads: reads}
	}
	if p.query, err = prepare(regoQuery); err != nil {
		return nil, regoErrors(err)
	}
	if p.explainQuery, err = prepare(regoExplainQuery); err != nil {
		return nil, regoErrors(err)
	}
	return p, nil
}

// regoErrors renders OPA's errors one per line, each with its location,
// without OPA's "n errors occurred" heading.
func regoErrors(err error) error {
	var list ast.Errors
	if !errors.As(err, &list) || len(list) == 0 {
		return err
	}
	lines := make([]string, len(list))
	for i, e := range list {
		lines[i] = e.Error()
	}
	return errors.New(strings.Join(lines, "\n"))
}

func (e *regoEngine) SetInventory(ctx context.Context, inv *Inventory, changed []string) error {
	// Counted before and after the write: an evaluation that overlaps the
	// write memoizes its verdict for a generation no later evaluation asks for.
	e.generation.Add(1)
	defer e.generation.Add(1)
	return storage.Txn(ctx, e.store, storage.WriteParams, func(txn storage.Transaction) error {
		if changed == nil {
			all := make(map[string]any, len(inv.Clusters()))
			for _, c := range inv.Clusters() {
				all[c.Name] = regoCluster(c)
			}
			return e.store.Write(ctx, txn, storage.ReplaceOp, storage.Path{"clusters"}, all)
		}
		for _, name := range changed {
			path := storage.Path{"clusters", name}
			c, ok := inv.Cluster(name)
			if ok {
				if err := e.store.Write(ctx, txn, storage.AddOp, path, regoCluster(c)); err != nil {
					return err
				}
				continue
			}
			err := e.store.Write(ctx, txn, storage.RemoveOp, path, nil)
			if err != nil && !storage.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
}

// regoCluster is a cluster as data.clusters[<name>] holds it.
func regoCluster(c Cluster) map[string]any {
	labels := make(map[string]any, len(c.Labels))
	for k, v := range c.Labels {
		labels[k] = v
	}
	claims := make(map[string]any, len(c.Claims))
	for k, v := range c.Claims {
		claims[k] = v
	}
	return map[string]any{"labels": labels, "claims": claims}
}

type regoProgram struct {
	id                  PolicyID
	query, explainQuery rego.PreparedEvalQuery
	engine              *regoEngine
	// memo is nil when the policy reads the input in a way regoInputReads
	// cannot bound.
	memo *verdictMemo
}

func (p *regoProgram) Evaluate(ctx context.Context, r *Resource, explain bool) (Verdict, error) {
	if p.memo == nil {
		return p.evaluate(ctx, r, explain)
	}
	generation := p.engine.generation.Load()
	key, ok := p.memo.key(r.object, explain)
	if !ok {
		return p.evaluate(ctx, r, explain)
	}
	if v, found := p.memo.get(generation, key); found {
		return v, nil
	}
	v, err := p.evaluate(ctx, r, explain)
	if err == nil {
		p.memo.put(generation, key, v)
	}
	return v, err
}

func (p *regoProgram) evaluate(ctx context.Context, r *Resource, explain bool) (Verdict, error) {
	input, err := r.regoInput()
	if err != nil {
		return Verdict{}, err
	}
	query := p.query
	if explain {
		query = p.explainQuery
	}
	budgeted, stop := withMemoryBudget(ctx, RegoMemoryBudget)
	rs, err := query.Eval(budgeted, rego.EvalParsedInput(input))
	stop()
	if err != nil {
		if over := overBudget(budgeted); over != nil {
			return Verdict{}, &PolicyError{Policy: p.id, Err: over}
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Verdict{}, ctxErr
		}
		return Verdict{}, err
	}
	if len(rs) != 1 {
		return Verdict{}, fmt.Errorf("the policy gave %d results, want 1", len(rs))
	}
	bindings := rs[0].Bindings
	var v Verdict
	if v.Annotations, err = regoAnnotations(only(bindings["a"])); err != nil {
		return Verdict{}, &PolicyError{Policy: p.id, Field: "annotations", Err: err}
	}
	if v.Errors, err = regoMessages(only(bindings["e"])); err != nil {
		return Verdict{}, &PolicyError{Policy: p.id, Field: "errors", Err: err}
	}
	if explain {
		if v.Excluded, err = regoExcluded(only(bindings["r"])); err != nil {
			return Verdict{}, &PolicyError{Policy: p.id, Field: "excluded", Err: err}
		}
	}
	return v, nil
}

// only returns the document of a query binding [x | x := doc]: nil when the
// policy does not define it.
func only(binding any) any {
	list, _ := binding.([]any)
	if len(list) == 0 {
		return nil
	}
	return list[0]
}

// regoAnnotations reads the annotations document: an object of annotation to
// value, where a value that is not a string is written as JSON.
func regoAnnotations(doc any) (map[string]string, error) {
	if doc == nil {
		return nil, nil
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("is %s, want an object of annotation to value", jsonKind(doc))
	}
	out := make(map[string]string, len(obj))
	for k, v := range obj {
		s, err := stringOrJSON(v)
		if err != nil {
			return nil, fmt.Errorf("[%q]: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}

// regoMessages reads the errors document: a set (or array) of messages, where
// a message that is not a string is written as JSON.
func regoMessages(doc any) ([]string, error) {
	if doc == nil {
		return nil, nil
	}
	list, ok := doc.([]any)
	if !ok {
		return nil, fmt.Errorf("is %s, want a set of messages", jsonKind(doc))
	}
	out := make([]string, 0, len(list))
	for _, m := range list {
		s, err := stringOrJSON(m)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

// regoExcluded reads the optional excluded document: an object of cluster
// name to a reason or a set of reasons.
func regoExcluded(doc any) (map[string][]string, error) {
	if doc == nil {
		return nil, nil
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("is %s, want an object of cluster name to reasons", jsonKind(doc))
	}
	out := make(map[string][]string, len(obj))
	for name, reasons := range obj {
		if list, ok := reasons.([]any); ok {
			msgs, err := regoMessages(list)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", name, err)
			}
			out[name] = msgs
			continue
		}
		s, err := stringOrJSON(reasons)
		if err != nil {
			return nil, fmt.Errorf("[%q]: %w", name, err)
		}
		out[name] = []string{s}
	}
	return out, nil
}

func stringOrJSON(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", errors.New("cannot be written as JSON: " + err.Error())
	}
	return string(b), nil
}

// jsonKind names the JSON kind of a value as Rego results hold it.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a set or array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
