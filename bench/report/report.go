package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// benchmark is every value one benchmark reported, by unit, one per run, in
// the order the runs were read.
type benchmark struct {
	name   string
	units  []string // in order of first appearance
	values map[string][]float64
}

// results are the benchmarks read so far, in order of first appearance.
type results struct {
	order  []*benchmark
	byName map[string]*benchmark
}

func newResults() *results { return &results{byName: map[string]*benchmark{}} }

// read adds every result line of r (named fileName in errors) and returns the
// lines that start with "Benchmark" but do not parse, each naming its file and
// line. Other lines (go test's headers, logs, PASS/FAIL) are ignored.
func (rs *results) read(r io.Reader, fileName string) error {
	var errs []error
	reader := benchfmt.NewReader(r, fileName)
	for reader.Scan() {
		switch rec := reader.Result().(type) {
		case *benchfmt.Result:
			rs.add(rec)
		case *benchfmt.SyntaxError:
			errs = append(errs, rec)
		}
	}
	return errors.Join(append(errs, reader.Err())...)
}

func (rs *results) add(r *benchfmt.Result) {
	name := benchmarkName(r.Name)
	b := rs.byName[name]
	if b == nil {
		b = &benchmark{name: name, values: map[string][]float64{}}
		rs.byName[name] = b
		rs.order = append(rs.order, b)
	}
	for _, v := range r.Values {
		// benchfmt tidies units (ns/op to sec/op); the report keeps the
		// benchmark's own spelling, which the format contract and the targets use.
		value, unit := v.Value, v.Unit
		if v.OrigUnit != "" {
			value, unit = v.OrigValue, v.OrigUnit
		}
		if _, seen := b.values[unit]; !seen {
			b.units = append(b.units, unit)
		}
		b.values[unit] = append(b.values[unit], value)
	}
}

// benchmarkName is n without go test's -N GOMAXPROCS suffix (benchfmt already
// took off "Benchmark").
func benchmarkName(n benchfmt.Name) string {
	base, parts := n.Parts()
	if last := len(parts) - 1; last >= 0 && strings.HasPrefix(string(parts[last]), "-") {
		parts = parts[:last]
	}
	var b strings.Builder
	b.Write(base)
	for _, p := range parts {
		b.Write(p)
	}
	return b.String()
}

// goTestTime is the unit go test reports every benchmark's time per
// iteration in.
const goTestTime = "ns/op"

// legacyFloors are the floor units the Go benchmarks printed before the
// format's "floor-<unit>", and the figure each is the floor of.
var legacyFloors = map[string]string{"identity-s/run": "s/run", "s/floor": "s/sync"}

// floorOf reports which figure's unit u is the floor of.
func floorOf(u string) (figure string, ok bool) {
	if f, ok := strings.CutPrefix(u, "floor-"); ok && f != "" {
		return f, true
	}
	f, ok := legacyFloors[u]
	return f, ok
}

// isRatio reports whether u is a ratio to the floor.
func isRatio(u string) bool { return strings.HasPrefix(u, "x-") && len(u) > 2 }

// summary is the median of a unit's values and how many there were; n is 0
// when the benchmark did not report the unit.
type summary struct {
	unit   string
	median float64
	n      int
}

func summarise(unit string, values []float64) summary {
	return summary{unit: unit, median: median(values), n: len(values)}
}

// median of values; 0 for none.
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

// row is one line of the table: one figure of one benchmark.
type row struct {
	benchmark    string
	figure       summary
	floor, ratio summary
	target       *target
}

// rows turns a benchmark's units into table rows: one per figure, the figure
// that has a floor first and the others in the order their units first
// appeared; the floor next to its figure and the ratio next to the first
// figure. A floor without its figure, and every ratio after the first, get a
// row of their own, so that no reported value is dropped silently.
func (b *benchmark) rows(allocs bool) []row {
	floors := map[string]string{} // figure unit -> floor unit
	var figures, ratios []string
	for _, u := range b.units {
		if f, ok := floorOf(u); ok {
			floors[f] = u
		} else if isRatio(u) {
			ratios = append(ratios, u)
		} else {
			figures = append(figures, u)
		}
	}
	if !allocs {
		figures = slices.DeleteFunc(figures, func(u string) bool { return u == "B/op" || u == "allocs/op" })
	}
	_, timeHasFloor := floors[goTestTime]
	if len(figures) > 1 && !timeHasFloor && (len(floors) > 0 || slices.ContainsFunc(figures, isWallTime) || allZero(b.values[goTestTime])) {
		figures = slices.DeleteFunc(figures, func(u string) bool { return u == goTestTime })
	}
	// The figure compared with a floor leads (go test prints the units of
	// ReportMetric sorted by name).
	if lead := slices.IndexFunc(figures, func(u string) bool { _, ok := floors[u]; return ok }); lead > 0 {
		first := figures[lead]
		copy(figures[1:lead+1], figures[:lead])
		figures[0] = first
	}
	var out []row
	for i, u := range figures {
		r := row{benchmark: b.name, figure: summarise(u, b.values[u])}
		if f, ok := floors[u]; ok {
			r.floor = summarise(f, b.values[f])
			delete(floors, u)
		}
		if i == 0 && len(ratios) > 0 {
			r.ratio = summarise(ratios[0], b.values[ratios[0]])
			ratios = ratios[1:]
		}
		out = append(out, r)
	}
	for _, u := range b.units {
		if f, ok := floorOf(u); ok && floors[f] == u || slices.Contains(ratios, u) {
			out = append(out, row{benchmark: b.name, figure: summarise(u, b.values[u])})
		}
	}
	for i := range out {
		out[i].target = targetFor(out[i].benchmark, out[i].figure.unit)
	}
	return out
}

// isWallTime reports whether u is a time the benchmark measured itself: s or
// ms, alone or per something (s/run, s/wave). cpu-s and the like are not.
func isWallTime(u string) bool {
	for _, t := range []string{"s", "ms"} {
		if u == t || strings.HasPrefix(u, t+"/") {
			return true
		}
	}
	return false
}

func allZero(values []float64) bool {
	return !slices.ContainsFunc(values, func(v float64) bool { return v != 0 })
}

// table is every row of every benchmark read; go test's B/op and allocs/op
// only with allocs.
func (rs *results) table(allocs bool) []row {
	var out []row
	for _, b := range rs.order {
		out = append(out, b.rows(allocs)...)
	}
	return out
}

// verdict is the target cell of r: the limit and whether the median meets it.
func (r row) verdict() string {
	t := r.target
	if t == nil {
		return ""
	}
	got, limit := r.figure, formatValue(t.max, r.figure.unit)
	if t.onRatio {
		got, limit = r.ratio, formatRatio(t.max)
	}
	switch {
	case got.n == 0:
		return "≤ " + limit + " not reported"
	case got.median <= t.max:
		return "≤ " + limit + " pass"
	default:
		return "≤ " + limit + " MISS"
	}
}

var header = []string{"benchmark", "figure", "median", "runs", "floor", "ratio", "target"}

// cells are r's columns, as header names them.
func (r row) cells() []string {
	floor, ratio := "", ""
	if r.floor.n > 0 {
		floor = formatValue(r.floor.median, r.figure.unit)
	}
	if r.ratio.n > 0 {
		ratio = formatRatio(r.ratio.median) + " " + strings.TrimPrefix(r.ratio.unit, "x-")
	}
	return []string{r.benchmark, r.figure.unit, formatValue(r.figure.median, r.figure.unit), fmt.Sprint(r.figure.n), floor, ratio, r.verdict()}
}

// formatValue prints v with three significant digits, in unit; go test's
// ns/op is printed as a duration (1.51s, 4.5µs).
func formatValue(v float64, unit string) string {
	if unit != goTestTime {
		return formatNumber(v)
	}
	s := v / 1e9
	for _, scale := range []struct {
		factor float64
		suffix string
	}{{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}} {
		if s >= scale.factor {
			return formatNumber(s/scale.factor) + scale.suffix
		}
	}
	return formatNumber(v) + "ns"
}

func formatRatio(v float64) string { return formatNumber(v) + "×" }

func formatNumber(v float64) string {
	if v >= 1000 || v <= -1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
