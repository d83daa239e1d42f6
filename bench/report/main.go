package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

func main() {
	var o options
	flag.BoolVar(&o.markdown, "markdown", false, "print the table as Markdown (for docs/performance.md)")
	flag.BoolVar(&o.allocs, "allocs", false, "also print go test's B/op and allocs/op (of the micro-benchmarks)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: benchreport [-markdown] [-allocs] [results-file ...]  (standard input without files)")
		flag.PrintDefaults()
	}
	flag.Parse()
	os.Exit(run(flag.Args(), os.Stdin, os.Stdout, os.Stderr, o))
}

// options are the command's flags.
type options struct {
	markdown, allocs bool
}

// run reads the result files (in when there are none), prints the table to
// out and bad lines to errOut, and returns the exit status.
func run(files []string, in io.Reader, out, errOut io.Writer, o options) int {
	rs := newResults()
	var bad []error
	sources := files
	if len(files) == 0 {
		sources = []string{"standard input"}
		if err := rs.read(in, sources[0]); err != nil {
			bad = append(bad, err)
		}
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		if err := rs.read(f, name); err != nil {
			bad = append(bad, err)
		}
		f.Close()
	}
	rows := rs.table(o.allocs)
	if len(rows) == 0 {
		bad = append(bad, fmt.Errorf("no benchmark result lines in %s", strings.Join(sources, ", ")))
	} else if o.markdown {
		writeMarkdown(out, rows)
	} else {
		writeText(out, rows)
	}
	for _, err := range bad {
		fmt.Fprintln(errOut, "benchreport:", err)
	}
	if len(bad) > 0 {
		return 1
	}
	return 0
}

// writeText prints rows as aligned columns, without trailing blanks.
func writeText(w io.Writer, rows []row) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(), "\t"))
	}
	tw.Flush()
	for line := range strings.Lines(buf.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}

func writeMarkdown(w io.Writer, rows []row) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(header, " | "))
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|")
	for _, r := range rows {
		cells := r.cells()
		for i, c := range cells {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}
