package placement

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// RegoMemoryBudget bounds what one Rego evaluation may allocate: 64 MiB,
// hundreds of times what a placement policy needs. CEL policies are bounded
// by CEL's cost limit instead.
const RegoMemoryBudget = 64 << 20

// maxFormatWidth bounds the sum of the widths and precisions of the verbs of
// a sprintf format in a Rego policy: fmt writes the padded values in one call
// that no cancellation reaches.
const maxFormatWidth = 1 << 16

// memoryWatchInterval is how often a running evaluation's allocations are
// looked at.
const memoryWatchInterval = time.Millisecond

// ErrRegoMemoryBudget is the cause of an evaluation stopped for allocating
// more than RegoMemoryBudget.
var ErrRegoMemoryBudget = fmt.Errorf("the evaluation allocated more than %d MiB, the limit of one placement policy evaluation", RegoMemoryBudget>>20)

// heapAllocsMetric is the Go runtime's count of bytes ever allocated on the
// heap: it grows with every allocation and never shrinks with collection.
const heapAllocsMetric = "/gc/heap/allocs:bytes"

func heapAllocated() uint64 {
	sample := []metrics.Sample{{Name: heapAllocsMetric}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// withMemoryBudget returns a context that is cancelled, with cause
// ErrRegoMemoryBudget, once the process has allocated more than budget bytes
// since the call, and the function that ends the watch. OPA checks the
// cancellation between evaluation steps and inside the built-ins that build
// large values (numbers.range, concat, replace, strings.replace_n,
// regex.replace), so an evaluation stops within about one watch interval of
// crossing the budget. The allocations counted are the process's: evaluations
// running side by side count each other's, which can only stop one sooner.
func withMemoryBudget(ctx context.Context, budget uint64) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	start := heapAllocated()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(memoryWatchInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if heapAllocated()-start > budget {
					cancel(ErrRegoMemoryBudget)
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// overBudget returns ErrRegoMemoryBudget when it stopped ctx's evaluation.
func overBudget(ctx context.Context) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrRegoMemoryBudget) {
		return cause
	}
	return nil
}

func init() {
	// OPA's built-ins are one table for the process; sprintf is the one
	// built-in that can allocate without bound in a single call.
	sprintf := topdown.GetBuiltin(ast.Sprintf.Name)
	topdown.RegisterBuiltinFunc(ast.Sprintf.Name, func(bctx topdown.BuiltinContext, operands []*ast.Term, iter func(*ast.Term) error) error {
		if format, ok := operands[0].Value.(ast.String); ok {
			if err := checkFormatWidths(string(format)); err != nil {
				// A halt stops the evaluation with the message; a plain
				// built-in error would only leave the rule undefined.
				return topdown.Halt{Err: err}
			}
		}
		return sprintf(bctx, operands, iter)
	})
}

// checkFormatWidths refuses a format whose verbs take their width or
// precision from the arguments (*) or ask for more than maxFormatWidth in all.
func checkFormatWidths(format string) error {
	total := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		for i < len(format) && (format[i] == '+' || format[i] == '-' || format[i] == '#' || format[i] == ' ' || format[i] == '0') {
			i++
		}
		for part := 0; part < 2; part++ { // width, then precision after '.'
			if part == 1 {
				if i >= len(format) || format[i] != '.' {
					break
				}
				i++
			}
			if i < len(format) && format[i] == '*' {
				return fmt.Errorf("sprintf: a width or precision taken from the arguments (*) is not allowed in a placement policy")
			}
			n := 0
			for i < len(format) && format[i] >= '0' && format[i] <= '9' {
				n = min(n*10+int(format[i]-'0'), maxFormatWidth+1)
				i++
			}
			if total += n; total > maxFormatWidth {
				return fmt.Errorf("sprintf: widths and precisions adding up to more than %d are not allowed in a placement policy", maxFormatWidth)
			}
		}
	}
	return nil
}
