package templates

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"text/template"
	"time"

	sprig "github.com/Masterminds/sprig/v3"
	gotemplates "github.com/stolostron/go-template-utils/v7/pkg/templates"
)

// Limits bound one template resolution: the templates of one policy
// template for one cluster on the hub, of one object definition on the
// spoke, or of one Policy for one cluster in a preview.
type Limits struct {
	// Timeout is the wall time one resolution may take. The caller makes it
	// the deadline of the context it passes to Bound (this package reads no
	// clock); here it names the bound in messages.
	Timeout time.Duration
	// Memory is how many bytes one resolution may produce: what its
	// functions return, what it prints and the text its loops repeat,
	// counted as they are made (a value printed twice counts twice). It
	// bounds what a resolution can make the process hold.
	Memory int64
	// TimeoutSetting and MemorySetting name where a user sets each bound (a
	// flag, a field), for messages.
	TimeoutSetting, MemorySetting string
}

const (
	// DefaultTimeout and DefaultMemory are the bounds of a resolution unless
	// set otherwise: far above what a policy template of OCM's or the policy
	// collection needs (milliseconds and kilobytes), far below what would
	// stall a controller or take it past its memory limit.
	DefaultTimeout = 3 * time.Second
	DefaultMemory  = 4 << 20
	// MaxDepth is how deeply a value a template prints or serializes may nest.
	MaxDepth = 1000
)

// RetryAfter is how long to wait before resolving again a template that met
// its bounds failures times in a row before: 15 seconds, doubling, at most
// 10 minutes.
func RetryAfter(failures int) time.Duration {
	d := 15 * time.Second
	for range min(failures, 6) {
		d *= 2
	}
	return min(d, 10*time.Minute)
}

// Backoffs counts, per policy, the evaluations in a row whose templates met
// their bounds. The zero value is ready; it is safe for concurrent use.
type Backoffs struct {
	mu       sync.Mutex
	failures map[string]int
}

// Next records whether an evaluation of key met a bound and returns how long
// to wait before evaluating it again because of that (RetryAfter of the
// evaluations in a row before it), 0 when it met none.
func (b *Backoffs) Next(key string, stopped bool) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !stopped {
		delete(b.failures, key)
		return 0
	}
	if b.failures == nil {
		b.failures = map[string]int{}
	}
	n := b.failures[key]
	b.failures[key] = n + 1
	return RetryAfter(n)
}

// Forget drops what is known of key (a policy that is gone).
func (b *Backoffs) Forget(key string) { b.Next(key, false) }

// OrDefault returns l with each unset bound at its default.
func (l Limits) OrDefault() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	return l
}

// BoundError is a resolution stopped at one of its Limits.
type BoundError struct {
	// Bound is "time", "memory" or "depth".
	Bound string
	// Limit is the bound's value as a user sets it (3s, 4Mi, 1000).
	Limit string
	// Setting names where a user sets it ("" when it is fixed).
	Setting string
	// What says what went past it.
	What string
}

func (e *BoundError) Error() string {
	msg := fmt.Sprintf("the template resolution was stopped at its %s bound of %s", e.Bound, e.Limit)
	if e.What != "" {
		msg += ": " + e.What
	}
	if e.Setting != "" {
		msg += fmt.Sprintf(" (set by %s)", e.Setting)
	}
	return msg
}

// IsBoundError reports whether err is, or wraps, a *BoundError.
func IsBoundError(err error) bool {
	var b *BoundError
	return errors.As(err, &b)
}

// Bound returns a Resolver that resolves with r within limits: ctx's
// deadline (the caller sets it from limits.Timeout) and cancellation stop a
// resolution between any two iterations of a loop, calls of a defined
// template or function calls, and limits.Memory bounds what it produces. A
// resolution stopped either way returns a *BoundError and its result is
// dropped. config is r's configuration (delimiters, indentation, disabled
// functions), which the bounded functions follow.
//
// It works on the template's text: it adds a tick to every range body and
// defined template and a guard to every printed pipeline, and replaces the
// functions the template calls by ones that check and charge the budget
// before they run (what until, seq, repeat, indent, replace, join, printf
// and friends would make) and after (what they made). Every error message
// the library gives is told with the template as written.
func Bound(ctx context.Context, r Resolver, config gotemplates.Config, limits Limits) Resolver {
	return &boundResolver{ctx: ctx, inner: r, config: config, limits: limits.OrDefault()}
}

type boundResolver struct {
	ctx    context.Context
	inner  Resolver
	config gotemplates.Config
	limits Limits
	// met is the first bound a resolution met.
	met *BoundError
}

// Stopped returns the first bound a resolution of r met, nil when none did
// (or r is not from Bound), so that a caller can try again after a backoff
// (RetryAfter) whatever it reported.
func Stopped(r Resolver) *BoundError {
	if b, ok := r.(*boundResolver); ok {
		return b.met
	}
	return nil
}

func (b *boundResolver) delims() (string, string) {
	start, stop := b.config.StartDelim, b.config.StopDelim
	if start == "" {
		start = "{{"
	}
	if stop == "" {
		stop = "}}"
	}
	return start, stop
}

func (b *boundResolver) ResolveTemplate(raw []byte, context any, options *gotemplates.ResolveOptions) (gotemplates.TemplateResult, error) {
	var opts gotemplates.ResolveOptions
	if options != nil {
		opts = *options
	}
	bud := &budget{ctx: b.ctx, limits: b.limits}
	if err := bud.check(); err != nil {
		b.met = cmp.Or(b.met, err)
		return gotemplates.TemplateResult{}, err
	}
	text := raw
	if !opts.InputIsYAML {
		yml, err := gotemplates.JSONToYAML(raw)
		if err != nil {
			return gotemplates.TemplateResult{}, fmt.Errorf("failed to convert the policy template to YAML: %w", err)
		}
		text = yml
	}
	start, stop := b.delims()
	in, err := instrument(string(text), start, stop)
	if err != nil {
		// The library parses the same text with the same parser (and checks
		// function names too): it refuses it before running anything, and
		// says why as it does.
		return b.inner.ResolveTemplate(raw, context, options)
	}
	funcs := bud.functions(in.calls, b.config)
	for name, f := range opts.CustomFunctions {
		funcs[name] = f
	}
	opts.CustomFunctions = funcs
	opts.InputIsYAML = true
	res, err := b.inner.ResolveTemplate([]byte(in.text), context, &opts)
	// Checked once more: a single call of the library's may have run past
	// the deadline.
	if berr := bud.check(); berr != nil {
		b.met = cmp.Or(b.met, berr)
		return gotemplates.TemplateResult{}, berr
	}
	if err != nil {
		var be *BoundError
		if errors.As(err, &be) {
			b.met = cmp.Or(b.met, be)
			return gotemplates.TemplateResult{}, be
		}
		var exec template.ExecError
		if res.HasSensitiveData && errors.As(err, &exec) {
			// Running the template failed after it read a Secret or
			// decrypted a value: the message may quote it (fail, a
			// conversion error), and is not shown. (A failed decryption
			// happens before, and quotes only the encrypted value.)
			return res, &secretError{err: err}
		}
		msg := strings.ReplaceAll(err.Error(), in.text, string(raw))
		return res, &asWritten{msg: in.originalPositions(msg), err: err}
	}
	return res, nil
}

// asWritten is a library error told with the template as the user wrote it.
type asWritten struct {
	msg string
	err error
}

func (e *asWritten) Error() string { return e.msg }
func (e *asWritten) Unwrap() error { return e.err }

// secretError is a resolution that failed after it read a Secret or
// decrypted a value: its message is not told, since it may carry the value.
type secretError struct{ err error }

func (e *secretError) Error() string {
	return "the template failed after it read a Secret or decrypted a value; its message is not shown, as it may hold the value"
}
func (e *secretError) Unwrap() error { return e.err }

// budget is what one resolution has used of its Limits. A resolution runs on
// one goroutine (text/template executes in order), so it needs no lock.
type budget struct {
	ctx    context.Context
	limits Limits
	used   int64
	err    *BoundError
}

// check stops the resolution once the deadline passed or the context ended.
func (b *budget) check() *BoundError {
	if b.err != nil {
		return b.err
	}
	if b.ctx.Err() != nil {
		b.err = &BoundError{Bound: "time", Limit: b.limits.Timeout.String(), Setting: b.limits.TimeoutSetting}
		if !errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
			b.err.What = "it was cancelled"
		}
	}
	return b.err
}

// charge counts n more bytes produced.
func (b *budget) charge(n int64, what string) *BoundError {
	if err := b.check(); err != nil {
		return err
	}
	b.used += n
	if n < 0 || b.used > b.limits.Memory {
		b.err = &BoundError{Bound: "memory", Limit: byteSize(b.limits.Memory), Setting: b.limits.MemorySetting, What: what}
	}
	return b.err
}

// left is how many bytes the resolution may still produce.
func (b *budget) left() int64 { return max(0, b.limits.Memory-b.used) }

// need refuses, before it is made, something of n bytes.
func (b *budget) need(n int64, name string) *BoundError {
	if n > b.left() || n < 0 {
		return b.charge(max(n, b.left()+1), name+" would make more than the memory left")
	}
	return nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKi", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// size is what printing or serializing v makes, walked without recursion and
// given up past limit. It fails on a value nested deeper than MaxDepth.
func (b *budget) size(v any, limit int64) (int64, *BoundError) {
	type item struct {
		v     reflect.Value
		depth int
	}
	var total int64
	stack := []item{{reflect.ValueOf(v), 0}}
	for len(stack) > 0 && total <= limit {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > MaxDepth {
			b.err = &BoundError{Bound: "depth", Limit: fmt.Sprint(MaxDepth), What: "a value nested deeper is printed or serialized"}
			return 0, b.err
		}
		rv := it.v
		for hops := 0; rv.IsValid() && (rv.Kind() == reflect.Interface || rv.Kind() == reflect.Pointer) && !rv.IsNil() && hops <= MaxDepth; hops++ {
			rv = rv.Elem()
		}
		if !rv.IsValid() {
			total += 5
			continue
		}
		switch rv.Kind() {
		case reflect.String:
			total += int64(rv.Len()) + 2
		case reflect.Map:
			total += 2
			iter := rv.MapRange()
			for iter.Next() && total <= limit {
				total += 2
				stack = append(stack, item{iter.Key(), it.depth + 1}, item{iter.Value(), it.depth + 1})
			}
		case reflect.Slice, reflect.Array:
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				total += int64(rv.Len()) * 4
				continue
			}
			total += 2
			for i := 0; i < rv.Len() && total <= limit; i++ {
				total++
				stack = append(stack, item{rv.Index(i), it.depth + 1})
			}
		case reflect.Struct:
			total += 2
			for i := range rv.NumField() {
				if rv.Type().Field(i).IsExported() {
					stack = append(stack, item{rv.Field(i), it.depth + 1})
				}
			}
		default:
			total += 8
		}
	}
	return total, nil
}

// chargeSize charges what serializing v makes.
func (b *budget) chargeSize(v any, name string) *BoundError {
	n, err := b.size(v, b.left()+1)
	if err != nil {
		return err
	}
	return b.charge(n, name+" would make more than the memory left")
}

// madeSize is what a function's result holds that it may have made: a
// string's bytes, a container's entries (not what they point to).
func madeSize(v reflect.Value) int64 {
	for v.IsValid() && v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() {
		return 0
	}
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len())
		}
		return 24 + 16*int64(v.Len())
	case reflect.Map:
		return 48 + 48*int64(v.Len())
	}
	return 8
}

var errorType = reflect.TypeFor[error]()

// sprigFuncs are Sprig's functions, as the library takes them.
var sprigFuncs = sprig.FuncMap()

// functions returns, for the functions a template calls, ones that check and
// charge the budget, and the budget's own tick, output guard and check.
// A function the library makes of its own (lookups, encryption, the
// conversions it overrides) is left to the library, but for indent, which it
// shares with Sprig and which can make any amount of text.
func (b *budget) functions(calls map[string]bool, config gotemplates.Config) map[string]any {
	disabled := map[string]bool{}
	for _, name := range config.DisabledFunctions {
		disabled[name] = true
	}
	out := map[string]any{
		tickFunc: func(static int) (string, error) {
			if err := b.charge(int64(static), "a loop repeats more text than the memory left"); err != nil {
				return "", err
			}
			return "", nil
		},
		outputFunc: func(v any) (reflect.Value, error) {
			if err := b.chargeSize(v, "printing a value"); err != nil {
				return reflect.Value{}, err
			}
			if v == nil {
				return reflect.Value{}, nil
			}
			return reflect.ValueOf(v), nil
		},
		checkFunc: func(v any) (any, error) {
			if err := b.chargeSize(v, "serializing a value"); err != nil {
				return nil, err
			}
			return v, nil
		},
	}
	for name := range calls {
		if disabled[name] {
			continue
		}
		var fn any
		switch {
		case name == "indent":
			fn = libraryIndent(int(config.AdditionalIndentation))
		case libraryOwn[name]:
			continue
		case jsonAliases[name] != "":
			fn = sprigFuncs[jsonAliases[name]]
		case builtins[name] != nil:
			fn = builtins[name]
		default:
			fn = sprigFuncs[name]
		}
		if fn == nil {
			continue
		}
		out[name] = b.wrap(name, fn)
	}
	return out
}

// libraryIndent is the library's indent: Sprig's with the resolver's
// additional indentation, without the leading padding.
func libraryIndent(additional int) func(int, string) string {
	indent := sprigFuncs["indent"].(func(int, string) string)
	return func(spaces int, v string) string {
		return strings.TrimSpace(indent(spaces+additional, v))
	}
}

// libraryOwn are the functions the library makes itself (and skipObject,
// the spoke's): they read through the caller's Resolver or are linear.
var libraryOwn = map[string]bool{
	"copyConfigMapData": true, "copySecretData": true, "fromSecret": true, "fromConfigMap": true,
	"fromClusterClaim": true, "lookupClusterClaim": true, "getNodesWithExactRoles": true,
	"hasNodesWithExactRoles": true, "lookup": true, "base64enc": true, "base64dec": true,
	"b64enc": true, "b64dec": true, "autoindent": true, "atoi": true, "toInt": true,
	"toBool": true, "toLiteral": true, "fromYAML": true, "toYAML": true, "fromYaml": true,
	"toYaml": true, "protect": true, "skipObject": true, "env": true, "expandenv": true,
}

// jsonAliases are the library's names for Sprig's JSON functions.
var jsonAliases = map[string]string{
	"fromJSON": "fromJson", "mustFromJSON": "mustFromJson", "toJSON": "toJson",
	"mustToJSON": "mustToJson", "toRawJSON": "toRawJson", "mustToRawJSON": "mustToRawJson",
}

// builtins are text/template's functions that print their arguments.
var builtins = map[string]any{
	"print":    fmt.Sprint,
	"printf":   fmt.Sprintf,
	"println":  fmt.Sprintln,
	"html":     template.HTMLEscaper,
	"js":       template.JSEscaper,
	"urlquery": template.URLQueryEscaper,
}

// serializers print or walk all of their arguments: what they would make is
// charged before they run.
var serializers = map[string]bool{
	"print": true, "printf": true, "println": true, "html": true, "js": true, "urlquery": true,
	"toString": true, "toStrings": true, "quote": true, "squote": true, "cat": true, "join": true,
	"toJson": true, "mustToJson": true, "toPrettyJson": true, "mustToPrettyJson": true,
	"toRawJson": true, "mustToRawJson": true, "toJSON": true, "mustToJSON": true,
	"toRawJSON": true, "mustToRawJSON": true, "deepCopy": true, "mustDeepCopy": true,
	"merge": true, "mustMerge": true, "mergeOverwrite": true, "mustMergeOverwrite": true,
	"sortAlpha": true, "toDecimal": true, "dict": true,
}

// wrap returns fn checking the budget before it runs (what it would make,
// where its arguments tell) and charging what it made.
func (b *budget) wrap(name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func || t.NumOut() == 0 || t.NumOut() > 2 || (t.NumOut() == 2 && t.Out(1) != errorType) {
		return fn
	}
	in := make([]reflect.Type, t.NumIn())
	for i := range in {
		in[i] = t.In(i)
	}
	wrapped := reflect.FuncOf(in, []reflect.Type{t.Out(0), errorType}, t.IsVariadic())
	fail := func(err error) []reflect.Value {
		return []reflect.Value{reflect.Zero(t.Out(0)), reflect.ValueOf(&err).Elem()}
	}
	return reflect.MakeFunc(wrapped, func(args []reflect.Value) []reflect.Value {
		if err := b.check(); err != nil {
			return fail(err)
		}
		flat := args
		if t.IsVariadic() && len(args) > 0 {
			last := args[len(args)-1]
			flat = append(append([]reflect.Value(nil), args[:len(args)-1]...), make([]reflect.Value, last.Len())...)
			for i := range last.Len() {
				flat[len(args)-1+i] = last.Index(i)
			}
		}
		if n, ok := wouldMake(name, flat); ok {
			if err := b.need(n, name); err != nil {
				return fail(err)
			}
		}
		if serializers[name] {
			for i, a := range flat {
				if name == "dict" && i%2 == 1 {
					continue // dict prints its keys only
				}
				if err := b.chargeSize(a.Interface(), name); err != nil {
					return fail(err)
				}
			}
		}
		var outs []reflect.Value
		if t.IsVariadic() {
			outs = v.CallSlice(args)
		} else {
			outs = v.Call(args)
		}
		if len(outs) == 2 && !outs[1].IsNil() {
			return outs
		}
		if err := b.charge(madeSize(outs[0]), name+" made more than the memory left"); err != nil {
			return fail(err)
		}
		return []reflect.Value{outs[0], reflect.Zero(errorType)}
	}).Interface()
}

// wouldMake is, for a function whose arguments say how much it makes, that
// size (an upper bound), before it is made.
func wouldMake(name string, args []reflect.Value) (int64, bool) {
	str := func(i int) string {
		if i < len(args) && args[i].Kind() == reflect.String {
			return args[i].String()
		}
		return ""
	}
	num := func(i int) int64 {
		if i >= len(args) {
			return 0
		}
		switch a := args[i]; a.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return a.Int()
		case reflect.Interface:
			if a.IsNil() {
				return 0
			}
			return num2(a.Elem())
		}
		return num2(args[i])
	}
	abs := func(n int64) int64 {
		if n < 0 {
			return -n
		}
		return n
	}
	switch name {
	case "repeat":
		return mul(num(0), int64(len(str(1)))), true
	case "until":
		return mul(abs(num(0))+1, 16), true
	case "untilStep":
		step := abs(num(2))
		if step == 0 {
			return 0, true
		}
		return mul(abs(num(1)-num(0))/step+1, 16), true
	case "seq":
		// seq takes one to three numbers: at most |last - first| + 1 of them,
		// each printed in up to 20 bytes.
		var first, last int64 = 1, 0
		switch len(args) {
		case 1:
			last = num(0)
		case 2:
			first, last = num(0), num(1)
		case 3:
			first, last = num(0), num(2)
		}
		return mul(abs(last-first)+1, 21), true
	case "indent", "nindent":
		return mul(int64(strings.Count(str(1), "\n")+1), abs(num(0))+9) + int64(len(str(1))), true
	case "replace":
		old, repl, src := str(0), str(1), str(2)
		n := int64(strings.Count(src, old))
		return mul(n, int64(len(repl))) + int64(len(src)), true
	case "regexReplaceAll", "mustRegexReplaceAll", "regexReplaceAllLiteral", "mustRegexReplaceAllLiteral":
		return mul(int64(len(str(1))+1), int64(len(str(2)))) + int64(len(str(1))), true
	case "wrapWith":
		width := max(abs(num(0)), 1)
		return mul(int64(len(str(2)))/width+1, int64(len(str(1)))) + int64(len(str(2))), true
	case "randAlphaNum", "randAlpha", "randNumeric", "randAscii":
		return abs(num(0)), true
	case "randBytes":
		return mul(abs(num(0)), 2), true
	case "splitList", "split", "splitn", "regexSplit", "regexFindAll", "mustRegexSplit", "mustRegexFindAll":
		return mul(int64(len(str(0))+len(str(1))+1), 48), true
	case "join":
		if len(args) == 2 {
			return mul(int64(reflectLen(args[1])), int64(len(str(0)))), true
		}
	case "printf":
		return formatWidths(str(0)), true
	}
	return 0, false
}

// formatWidths is an upper bound of what the widths and precisions of a
// printf format add: fmt bounds each at 10^6, and one given by an argument
// (*) may be that large.
func formatWidths(format string) int64 {
	var total int64
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		for part := 0; part < 2 && i < len(format); part++ {
			if format[i] == '*' {
				total += 1e6
				i++
			} else {
				n := int64(0)
				for i < len(format) && format[i] >= '0' && format[i] <= '9' {
					n = min(n*10+int64(format[i]-'0'), 1e6)
					i++
				}
				total += n
			}
			if part == 0 && i < len(format) && format[i] == '.' {
				i++
				continue
			}
			break
		}
	}
	return total + int64(len(format))
}

func num2(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(min(v.Uint(), 1<<62))
	case reflect.Float32, reflect.Float64:
		return int64(max(min(v.Float(), 1<<62), -(1 << 62)))
	}
	return 0
}

func reflectLen(v reflect.Value) int {
	for v.IsValid() && v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return v.Len()
	}
	return 0
}

// mul multiplies sizes, saturating instead of overflowing.
func mul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}
