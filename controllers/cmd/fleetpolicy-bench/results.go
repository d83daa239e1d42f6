package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// figure is one value of a result line with its unit.
type figure struct {
	value float64
	unit  string
}

// withFloor is a measured value, the floor measured in the same run and their
// ratio, in unit ("s" gives "s", "floor-s", "x-floor").
func withFloor(value, floor float64, unit string) []figure {
	return []figure{{value, unit}, {floor, "floor-" + unit}, {value / floor, "x-floor"}}
}

// results writes one Go benchmark result line per run and figure, and keeps the
// figures for the summary of medians.
type results struct {
	out    io.Writer
	names  []string
	byName map[string][][]figure
}

func newResults(out io.Writer) *results {
	return &results{out: out, byName: map[string][][]figure{}}
}

// line writes "Benchmark<name> 1 <ns> ns/op <value> <unit> ...": ns is the
// measured time of a time figure, 0 otherwise.
func (r *results) line(name string, ns time.Duration, figs ...figure) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Benchmark%s 1 %d ns/op", name, ns.Nanoseconds())
	for _, f := range figs {
		fmt.Fprintf(&sb, " %s %s", formatValue(f.value), f.unit)
	}
	fmt.Fprintln(r.out, sb.String())
	if _, seen := r.byName[name]; !seen {
		r.names = append(r.names, name)
	}
	r.byName[name] = append(r.byName[name], figs)
}

// formatValue prints about four significant digits, never in exponent form.
func formatValue(v float64) string {
	a := math.Abs(v)
	decimals := 0
	switch {
	case a == 0 || a >= 999.95:
	case a >= 99.995:
		decimals = 1
	case a >= 9.9995:
		decimals = 2
	case a >= 0.99995:
		decimals = 3
	default:
		decimals = 4
	}
	return fmt.Sprintf("%.*f", decimals, v)
}

// summary prints, per benchmark name, the median of each unit over its lines.
func (r *results) summary(w io.Writer) {
	if len(r.names) == 0 {
		return
	}
	fmt.Fprintln(w, "\nsummary (medians):")
	for _, name := range r.names {
		runs := r.byName[name]
		var parts []string
		for i, f := range runs[0] {
			var xs []float64
			for _, run := range runs {
				if i < len(run) && run[i].unit == f.unit {
					xs = append(xs, run[i].value)
				}
			}
			parts = append(parts, formatValue(median(xs))+" "+f.unit)
		}
		fmt.Fprintf(w, "  %-60s %s  (%d run(s))\n", name, strings.Join(parts, "  "), len(runs))
	}
}

func median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func mib(bytes int64) float64 { return float64(bytes) / (1 << 20) }
