package view

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// statusColors are the chart's colours per rolloutStatus (CSS classes would
// need a style sheet inside the SVG; presentation attributes need none).
var statusColors = []struct {
	status policyv1.RolloutStatus
	label  string
	color  string
}{
	{policyv1.RolloutSucceeded, "done", "#2e7d32"},
	{policyv1.RolloutSkip, "skipped", "#9e9e9e"},
	{policyv1.RolloutProgressing, "progressing", "#1565c0"},
	{policyv1.RolloutFailed, "failed", "#c62828"},
	{policyv1.RolloutTimeOut, "timed out", "#ef6c00"},
	{policyv1.RolloutToApply, "to apply", "#e0e0e0"},
	{"", "not live", "#ffffff"},
}

const (
	svgWidth  = 760
	svgLabel  = 150
	svgRow    = 34
	svgBar    = 20
	svgAxis   = 28
	svgStatus = 240 // the share bar's width
)

// TimelineSVG draws the rollout as an SVG chart: one row per wave, on the left
// a bar of its clusters' shares by rolloutStatus, on the right the wave's span
// on a time axis from the rollout's start (or its earliest known time) to now.
// Every text is escaped; the chart has a title and a description for screen
// readers and a <title> per bar.
func TimelineSVG(m TimelineModel) template.HTML {
	var b strings.Builder
	height := svgAxis + svgRow*max(len(m.Waves), 1) + 10
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-labelledby="tl-title tl-desc">`,
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<title id="tl-title">Rollout of %s/%s: %s</title>`, esc(m.Namespace), esc(m.Name), esc(string(m.Status)))
	desc := make([]string, 0, len(m.Waves))
	for _, w := range m.Waves {
		desc = append(desc, fmt.Sprintf("wave %d %s (%d clusters)", w.Index, w.State, len(w.Clusters)))
	}
	fmt.Fprintf(&b, `<desc id="tl-desc">%s</desc>`, esc(strings.Join(desc, "; ")))

	// The time axis: from the start (or earliest time seen) to now.
	from := m.Now
	if m.Start != nil {
		from = *m.Start
	}
	for _, w := range m.Waves {
		for _, c := range w.Clusters {
			if c.Since != nil && c.Since.Before(from) {
				from = *c.Since
			}
		}
	}
	span := m.Now.Sub(from)
	if span <= 0 {
		span = time.Second
	}
	axisX := svgLabel + svgStatus + 20
	axisW := svgWidth - axisX - 10
	x := func(t time.Time) float64 { return float64(axisX) + float64(axisW)*float64(t.Sub(from))/float64(span) }
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="12" fill="#333">clusters by rollout status</text>`, svgLabel)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="12" fill="#333">%s</text>`, axisX, esc(from.UTC().Format("15:04:05")))
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="12" fill="#333" text-anchor="end">now %s (%s)</text>`, svgWidth-10, esc(m.Now.UTC().Format("15:04:05")), esc(span.Round(time.Second).String()))
	fmt.Fprintf(&b, `<line x1="%d" y1="22" x2="%d" y2="22" stroke="#999"/>`, axisX, axisX+axisW)

	for i, w := range m.Waves {
		y := svgAxis + i*svgRow
		label := fmt.Sprintf("wave %d", w.Index)
		if m.Plan == "" && !m.LiveKnown {
			label = "live clusters"
		}
		fmt.Fprintf(&b, `<text x="4" y="%d" font-size="13" fill="#111">%s · %s</text>`, y+15, esc(label), esc(w.State))
		// Share bar.
		n := len(w.Clusters)
		off := 0.0
		for _, sc := range statusColors {
			k := w.Counts[sc.status]
			if k == 0 || n == 0 {
				continue
			}
			wd := float64(svgStatus) * float64(k) / float64(n)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" stroke="#555" stroke-width="0.5"><title>%s</title></rect>`,
				float64(svgLabel)+off, y+2, wd, svgBar, sc.color, esc(fmt.Sprintf("wave %d: %d of %d %s", w.Index, k, n, sc.label)))
			off += wd
		}
		// Time span.
		if w.Start != nil {
			end := m.Now
			if w.End != nil {
				end = *w.End
			}
			x0, x1 := x(*w.Start), x(end)
			color := "#1565c0"
			switch w.State {
			case WaveDone:
				color = "#2e7d32"
			case WaveFailed:
				color = "#c62828"
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`,
				x0, y+6, max(x1-x0, 2), svgBar-8, color, esc(fmt.Sprintf("wave %d %s, %s", w.Index, w.State, end.Sub(*w.Start).Round(time.Second))))
		} else if w.State == WaveWaiting {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#666" text-anchor="end">not reached</text>`, svgWidth-10, y+15)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec: every text above is escaped by esc
}

func esc(s string) string { return html.EscapeString(s) }
