package placement

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// celCostLimit bounds the cost of one evaluation of one expression, as the
// Kubernetes API server bounds admission expressions (PerCallLimit).
const celCostLimit = 1_000_000

// celEnvs are the environments of the parts of a CEL policy.
type celEnvs struct {
	when      *cel.Env // object
	variables *cel.Env // object, variables
	cluster   *cel.Env // match: object, variables, cluster
	result    *cel.Env // errors, annotations: object, variables, selected
}

var envs, envsErr = newCELEnvs()

func newCELEnvs() (celEnvs, error) {
	var e celEnvs
	var err error
	if e.when, err = cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(), ext.Sets(),
	); err != nil {
		return celEnvs{}, err
	}
	if e.variables, err = e.when.Extend(cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType))); err != nil {
		return celEnvs{}, err
	}
	if e.cluster, err = e.variables.Extend(cel.Variable("cluster", cel.MapType(cel.StringType, cel.DynType))); err != nil {
		return celEnvs{}, err
	}
	if e.result, err = e.variables.Extend(cel.Variable("selected", cel.ListType(cel.StringType))); err != nil {
		return celEnvs{}, err
	}
	return e, nil
}

// celEngine runs CEL policies over the inventory it holds, each cluster made
// into a CEL value once when the inventory changes.
type celEngine struct {
	clusters atomic.Pointer[[]celCluster]
}

type celCluster struct {
	name  string
	value ref.Val
}

// NewCELEngine returns the engine of CEL placement policies.
func NewCELEngine() Engine {
	e := &celEngine{}
	e.clusters.Store(&[]celCluster{})
	return e
}

func (e *celEngine) SetInventory(_ context.Context, inv *Inventory, changed []string) error {
	previous := map[string]ref.Val{}
	if changed != nil {
		for _, c := range *e.clusters.Load() {
			previous[c.name] = c.value
		}
		for _, name := range changed {
			delete(previous, name)
		}
	}
	clusters := make([]celCluster, len(inv.Clusters()))
	for i, c := range inv.Clusters() {
		value, ok := previous[c.Name]
		if !ok {
			value = celClusterValue(c)
		}
		clusters[i] = celCluster{name: c.Name, value: value}
	}
	e.clusters.Store(&clusters)
	return nil
}

func celClusterValue(c Cluster) ref.Val {
	a := types.DefaultTypeAdapter
	return types.NewRefValMap(a, map[ref.Val]ref.Val{
		types.String("name"):   types.String(c.Name),
		types.String("labels"): types.NewStringStringMap(a, c.Labels),
		types.String("claims"): types.NewStringStringMap(a, c.Claims),
	})
}

type celExpr struct {
	field   string // e.g. match[0].expression
	source  string
	program cel.Program
}

type celNamed struct {
	name string
	expr celExpr
}

type celCheck struct {
	expr    celExpr
	message string
	// messageExpr is set when the message is an expression.
	messageExpr *celExpr
}

type celProgram struct {
	id          PolicyID
	engine      *celEngine
	when        *celExpr
	variables   []celNamed
	match       []celCheck
	errors      []celCheck
	annotations []celNamed // sorted by annotation
}

func (e *celEngine) Compile(_ context.Context, id PolicyID, text string) (Program, error) {
	if envsErr != nil {
		return nil, envsErr
	}
	doc, err := ParseCELPolicy(text)
	if err != nil {
		return nil, err
	}
	p := &celProgram{id: id, engine: e}
	if doc.When != "" {
		when, err := compileCEL(envs.when, "when", doc.When, cel.BoolType)
		if err != nil {
			return nil, err
		}
		p.when = &when
	}
	for i, v := range doc.Variables {
		expr, err := compileCEL(envs.variables, fmt.Sprintf("variables[%d].expression", i), v.Expression, nil)
		if err != nil {
			return nil, err
		}
		p.variables = append(p.variables, celNamed{name: v.Name, expr: expr})
	}
	if p.match, err = compileChecks(envs.cluster, "match", doc.Match); err != nil {
		return nil, err
	}
	if p.errors, err = compileChecks(envs.result, "errors", doc.Errors); err != nil {
		return nil, err
	}
	for _, key := range sortedKeys(doc.Annotations) {
		expr, err := compileCEL(envs.result, fmt.Sprintf("annotations[%q]", key), doc.Annotations[key], cel.StringType)
		if err != nil {
			return nil, err
		}
		p.annotations = append(p.annotations, celNamed{name: key, expr: expr})
	}
	return p, nil
}

func compileChecks(env *cel.Env, field string, conditions []CELCondition) ([]celCheck, error) {
	var checks []celCheck
	for i, c := range conditions {
		expr, err := compileCEL(env, fmt.Sprintf("%s[%d].expression", field, i), c.Expression, cel.BoolType)
		if err != nil {
			return nil, err
		}
		check := celCheck{expr: expr, message: c.Message}
		switch {
		case c.MessageExpression != "":
			msg, err := compileCEL(env, fmt.Sprintf("%s[%d].messageExpression", field, i), c.MessageExpression, cel.StringType)
			if err != nil {
				return nil, err
			}
			check.messageExpr = &msg
		case c.Message == "":
			check.message = "fails " + expr.field + ": " + c.Expression
		}
		checks = append(checks, check)
	}
	return checks, nil
}

// compileCEL compiles one expression; want, when not nil, is the type it must
// have (or dyn, checked when evaluated).
func compileCEL(env *cel.Env, field, source string, want *cel.Type) (celExpr, error) {
	ast, issues := env.Compile(source)
	if issues != nil && issues.Err() != nil {
		return celExpr{}, fmt.Errorf("%s: %w", field, issues.Err())
	}
	if out := ast.OutputType(); want != nil && !out.IsExactType(want) && !out.IsExactType(cel.DynType) {
		return celExpr{}, fmt.Errorf("%s: the expression is %s, want %s", field, out, want)
	}
	program, err := env.Program(ast, cel.CostLimit(celCostLimit), cel.InterruptCheckFrequency(100),
		cel.EvalOptions(cel.OptOptimize), cel.OptimizeRegex(interpreter.MatchesRegexOptimization))
	if err != nil {
		return celExpr{}, fmt.Errorf("%s: %w", field, err)
	}
	return celExpr{field: field, source: source, program: program}, nil
}

// celActivation binds the variables of a policy's expressions.
type celActivation struct {
	object, variables, cluster, selected ref.Val
}

func (a *celActivation) ResolveName(name string) (any, bool) {
	var v ref.Val
	switch name {
	case "object":
		v = a.object
	case "variables":
		v = a.variables
	case "cluster":
		v = a.cluster
	case "selected":
		v = a.selected
	}
	return v, v != nil
}

func (a *celActivation) Parent() interpreter.Activation { return nil }

func (e celExpr) eval(ctx context.Context, act *celActivation) (ref.Val, error) {
	out, _, err := e.program.ContextEval(ctx, act)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, err
	}
	return out, nil
}

func (e celExpr) evalBool(ctx context.Context, act *celActivation) (bool, error) {
	out, err := e.eval(ctx, act)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the expression gave %s, want a bool", out.Type().TypeName())
	}
	return bool(b), nil
}

func (e celExpr) evalString(ctx context.Context, act *celActivation) (string, error) {
	out, err := e.eval(ctx, act)
	if err != nil {
		return "", err
	}
	s, ok := out.(types.String)
	if !ok {
		return "", fmt.Errorf("the expression gave %s, want a string", out.Type().TypeName())
	}
	return string(s), nil
}

// render is the check's message for the bound variables.
func (c celCheck) render(ctx context.Context, act *celActivation) (string, error) {
	if c.messageExpr == nil {
		return c.message, nil
	}
	return c.messageExpr.evalString(ctx, act)
}

func (p *celProgram) fail(field string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &PolicyError{Policy: p.id, Field: field, Err: err}
}

func (p *celProgram) Evaluate(ctx context.Context, r *Resource, explain bool) (Verdict, error) {
	act := &celActivation{object: r.celObject()}
	if p.when != nil {
		applies, err := p.when.evalBool(ctx, act)
		if err != nil {
			return Verdict{}, p.fail(p.when.field, err)
		}
		if !applies {
			return Verdict{}, nil
		}
	}
	variables := make(map[ref.Val]ref.Val, len(p.variables))
	act.variables = types.NewRefValMap(types.DefaultTypeAdapter, variables)
	for _, v := range p.variables {
		value, err := v.expr.eval(ctx, act)
		if err != nil {
			return Verdict{}, p.fail(v.expr.field, err)
		}
		variables[types.String(v.name)] = value
	}

	var v Verdict
	clusters := *p.engine.clusters.Load()
	selected := make([]string, 0, len(clusters))
	if len(p.match) == 0 {
		for _, c := range clusters {
			selected = append(selected, c.name)
		}
	} else {
		for _, c := range clusters {
			if err := ctx.Err(); err != nil {
				return Verdict{}, err
			}
			matched, reasons, err := p.matchCluster(ctx, act, c, explain)
			if err != nil {
				return Verdict{}, err
			}
			if matched {
				selected = append(selected, c.name)
				continue
			}
			if explain {
				if v.Excluded == nil {
					v.Excluded = map[string][]string{}
				}
				v.Excluded[c.name] = reasons
			}
		}
	}
	act.cluster = nil
	act.selected = types.NewStringList(types.DefaultTypeAdapter, selected)

	for _, check := range p.errors {
		failed, err := check.expr.evalBool(ctx, act)
		if err != nil {
			return Verdict{}, p.fail(check.expr.field, err)
		}
		if !failed {
			continue
		}
		msg, err := check.render(ctx, act)
		if err != nil {
			return Verdict{}, p.fail(check.messageExpr.field, err)
		}
		v.Errors = append(v.Errors, msg)
	}
	if len(p.match) > 0 || len(p.annotations) > 0 {
		v.Annotations = make(map[string]string, len(p.annotations)+1)
	}
	if len(p.match) > 0 {
		v.Annotations[ClustersAnnotation] = FormatClusters(selected)
	}
	for _, a := range p.annotations {
		value, err := a.expr.evalString(ctx, act)
		if err != nil {
			return Verdict{}, p.fail(a.expr.field, err)
		}
		v.Annotations[a.name] = value
	}
	return v, nil
}

// matchCluster reports whether the cluster meets every match condition and,
// when explaining, the messages of the conditions it fails. Without explain it
// stops at the first failed condition.
func (p *celProgram) matchCluster(ctx context.Context, act *celActivation, c celCluster, explain bool) (bool, []string, error) {
	act.cluster = c.value
	matched := true
	var reasons []string
	for _, check := range p.match {
		ok, err := check.expr.evalBool(ctx, act)
		if err != nil {
			return false, nil, p.fail(check.expr.field+" for cluster "+c.name, err)
		}
		if ok {
			continue
		}
		matched = false
		if !explain {
			break
		}
		msg, err := check.render(ctx, act)
		if err != nil {
			return false, nil, p.fail(check.messageExpr.field+" for cluster "+c.name, err)
		}
		reasons = append(reasons, msg)
	}
	return matched, reasons, nil
}
