package templates

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template/parse"
)

// The functions instrument adds to a template. They are named so that no
// template of OCM's or a user's means anything else by them.
const (
	tickFunc   = "fleetpolicyBudgetTick"
	outputFunc = "fleetpolicyBudgetOutput"
	checkFunc  = "fleetpolicyBudgetCheck"
)

// instrumented is a template's text with the calls that let a budget bound
// its resolution: a tick at the start of every range body and defined
// template (each iteration or call checks the deadline and charges the
// body's static text), an output guard around every printed pipeline
// (charging what it prints before it is printed) and a check on the argument
// of the library's own serializers, which a budget cannot wrap.
type instrumented struct {
	text string
	// calls names every function the template calls.
	calls map[string]bool
	// lookupMayReadSecret is true when a lookup call's kind is "Secret" or is
	// not a literal.
	lookupMayReadSecret bool
	// shifts are, per line (0-based), the insertions made on it, so that the
	// columns in error messages can be told as the user wrote them.
	shifts map[int][]shift
}

type shift struct{ col, n int }

type insertion struct {
	at    int
	text  string
	order int // at one offset: lower first
}

// parseTemplate parses text as the library does (its delimiters), without
// checking function names.
func parseTemplate(text, start, stop string) (map[string]*parse.Tree, error) {
	t := parse.New("tmpl")
	t.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := t.Parse(text, start, stop, trees); err != nil {
		return nil, err
	}
	return trees, nil
}

// instrumentedCache keeps the instrumentation of recent templates: the hub
// resolves one policy template for every cluster, the spoke one object
// definition at every evaluation. Entries are read-only once made. It holds
// at most cacheEntries templates of at most cacheTextSize bytes each, and is
// emptied when full (a simple bound; the next resolutions fill it again).
var instrumentedCache = struct {
	sync.Mutex
	m map[string]*instrumented
}{m: map[string]*instrumented{}}

const (
	cacheEntries  = 512
	cacheTextSize = 64 << 10
)

// instrument parses text with the delimiters start and stop and adds the
// budget's calls, or returns what it made of the same text before. It fails
// when text does not parse.
func instrument(text, start, stop string) (*instrumented, error) {
	if len(text) > cacheTextSize {
		return instrumentText(text, start, stop)
	}
	key := start + "\x00" + stop + "\x00" + text
	instrumentedCache.Lock()
	in, ok := instrumentedCache.m[key]
	instrumentedCache.Unlock()
	if ok {
		return in, nil
	}
	in, err := instrumentText(text, start, stop)
	if err != nil {
		return nil, err
	}
	instrumentedCache.Lock()
	if len(instrumentedCache.m) >= cacheEntries {
		clear(instrumentedCache.m)
	}
	instrumentedCache.m[key] = in
	instrumentedCache.Unlock()
	return in, nil
}

// instrumentText is instrument without the cache.
func instrumentText(text, start, stop string) (*instrumented, error) {
	trees, err := parseTemplate(text, start, stop)
	if err != nil {
		return nil, err
	}
	in := &instrumenter{text: text, start: start, stop: stop, out: &instrumented{calls: map[string]bool{}}}
	for _, name := range slices.Sorted(maps.Keys(trees)) {
		tree := trees[name]
		if tree.Root == nil {
			continue
		}
		if name != "tmpl" {
			// A defined template may call itself: each call is a tick.
			in.tick(int(tree.Root.Pos), tree.Root)
		}
		in.list(tree.Root)
	}
	in.out.text = in.apply()
	return in.out, nil
}

type instrumenter struct {
	text, start, stop string
	inserts           []insertion
	out               *instrumented
}

func (in *instrumenter) insert(at int, text string, order int) {
	in.inserts = append(in.inserts, insertion{at: at, text: text, order: order})
}

// tick inserts, at the start of body, a tick charging body's static text.
// When the body starts with an action that trims the space before it, the
// tick goes before that space, which the action still trims.
func (in *instrumenter) tick(at int, body *parse.ListNode) {
	if rest := in.text[at:]; strings.HasPrefix(rest, in.start+"-") && len(rest) > len(in.start)+1 && isSpace(rest[len(in.start)+1]) {
		for at > 0 && isSpace(in.text[at-1]) {
			at--
		}
	}
	in.insert(at, fmt.Sprintf("%s %s %d %s", in.start, tickFunc, staticText(body), in.stop), 0)
}

// staticText is the size of the text body prints on every run, not counting
// the bodies of nested ranges (they have ticks of their own).
func staticText(l *parse.ListNode) int {
	if l == nil {
		return 0
	}
	n := 0
	for _, node := range l.Nodes {
		switch node := node.(type) {
		case *parse.TextNode:
			n += len(node.Text)
		case *parse.IfNode:
			n += staticText(node.List) + staticText(node.ElseList)
		case *parse.WithNode:
			n += staticText(node.List) + staticText(node.ElseList)
		case *parse.RangeNode:
			n += staticText(node.ElseList)
		}
	}
	return n
}

func (in *instrumenter) list(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, node := range l.Nodes {
		switch node := node.(type) {
		case *parse.ActionNode:
			in.pipe(node.Pipe, 1)
			if len(node.Pipe.Decl) == 0 && !endsInAutoindent(node.Pipe) {
				// A printed pipeline: charge what it prints first.
				if end, ok := in.pipelineEnd(int(node.Pos)); ok {
					in.insert(int(node.Pos), outputFunc+" (", 1)
					in.insert(end, ")", -1)
				}
			}
		case *parse.RangeNode:
			in.pipe(node.Pipe, 1)
			in.tick(int(node.List.Pos), node.List)
			in.list(node.List)
			in.list(node.ElseList)
		case *parse.IfNode:
			in.pipe(node.Pipe, 1)
			in.list(node.List)
			in.list(node.ElseList)
		case *parse.WithNode:
			in.pipe(node.Pipe, 1)
			in.list(node.List)
			in.list(node.ElseList)
		case *parse.TemplateNode:
			in.pipe(node.Pipe, 1)
		}
	}
}

// endsInAutoindent reports whether a pipeline ends in autoindent, which the
// library turns into indent N by finding "| autoindent" right before the
// closing delimiter: such an action is left as written (indent is charged).
func endsInAutoindent(p *parse.PipeNode) bool {
	if p == nil || len(p.Cmds) == 0 {
		return false
	}
	last := p.Cmds[len(p.Cmds)-1]
	id, ok := last.Args[0].(*parse.IdentifierNode)
	return ok && id.Ident == "autoindent"
}

// librarySerializers are the library's own functions that serialize a value
// of any size: their argument is checked before they run.
var librarySerializers = map[string]bool{"toYAML": true, "toYaml": true}

// pipe records the functions a pipeline calls and checks the argument of
// the library's serializers; depth orders nested insertions.
func (in *instrumenter) pipe(p *parse.PipeNode, depth int) {
	if p == nil {
		return
	}
	for i, cmd := range p.Cmds {
		if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok {
			in.out.calls[id.Ident] = true
			if id.Ident == "lookup" && lookupKindMayBeSecret(cmd) {
				in.out.lookupMayReadSecret = true
			}
			if librarySerializers[id.Ident] {
				switch {
				case len(cmd.Args) == 2:
					start := in.argumentStart(cmd.Args[1])
					if end, ok := in.argumentEnd(start); ok {
						in.insert(start, "("+checkFunc+" ", depth+1)
						in.insert(end, ")", -depth-1)
					}
				case len(cmd.Args) == 1 && i > 0:
					in.insert(int(id.Pos), checkFunc+" | ", depth+1)
				}
			}
		}
		for _, arg := range cmd.Args {
			in.arg(arg, depth)
		}
	}
}

func (in *instrumenter) arg(n parse.Node, depth int) {
	switch n := n.(type) {
	case *parse.PipeNode:
		in.pipe(n, depth+1)
	case *parse.ChainNode:
		in.arg(n.Node, depth)
	}
}

// lookupKindMayBeSecret reports whether a lookup command's kind (its second
// argument) is "Secret" or not a literal.
func lookupKindMayBeSecret(cmd *parse.CommandNode) bool {
	if len(cmd.Args) < 3 {
		return false
	}
	s, ok := cmd.Args[2].(*parse.StringNode)
	return !ok || s.Text == "Secret"
}

// argumentStart is where a command argument starts: a parenthesized
// pipeline's position is inside its parenthesis.
func (in *instrumenter) argumentStart(arg parse.Node) int {
	pos := int(arg.Position())
	if _, ok := arg.(*parse.PipeNode); ok {
		if i := strings.LastIndexByte(in.text[:pos], '('); i >= 0 {
			return i
		}
	}
	return pos
}

// pipelineEnd is the offset where the pipeline of the action starting at pos
// ends: before its right trim marker and closing delimiter.
func (in *instrumenter) pipelineEnd(pos int) (int, bool) {
	end, ok := in.scan(pos, false)
	if !ok {
		return 0, false
	}
	return trimEnd(in.text, pos, end), true
}

// argumentEnd is the offset where the command argument starting at pos ends:
// at the next "|" or ")" outside parentheses and quotes, or the action's end.
func (in *instrumenter) argumentEnd(pos int) (int, bool) {
	end, ok := in.scan(pos, true)
	if !ok {
		return 0, false
	}
	return trimEnd(in.text, pos, end), true
}

// isSpace is text/template's space around a trim marker.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimEnd steps back from end over a right trim marker and spaces.
func trimEnd(text string, pos, end int) int {
	for end > pos && isSpace(text[end-1]) {
		end--
	}
	if end-1 > pos && text[end-1] == '-' && isSpace(text[end-2]) {
		end -= 2
		for end > pos && isSpace(text[end-1]) {
			end--
		}
	}
	return end
}

// scan finds, from pos inside an action, the closing delimiter (or, with
// argument, the end of a command argument), skipping quoted strings, raw
// strings and character constants.
func (in *instrumenter) scan(pos int, argument bool) (int, bool) {
	text := in.text
	depth := 0
	for i := pos; i < len(text); {
		if strings.HasPrefix(text[i:], in.stop) {
			return i, true
		}
		switch c := text[i]; c {
		case '"', '\'':
			j := i + 1
			for j < len(text) && text[j] != c {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			continue
		case '`':
			j := strings.IndexByte(text[i+1:], '`')
			if j < 0 {
				return 0, false
			}
			i += j + 2
			continue
		case '(':
			depth++
		case ')':
			if depth == 0 && argument {
				return i, true
			}
			depth--
		case '|':
			if depth == 0 && argument {
				return i, true
			}
		}
		i++
	}
	return 0, false
}

// apply makes the instrumented text and records where it shifted columns.
func (in *instrumenter) apply() string {
	slices.SortStableFunc(in.inserts, func(a, b insertion) int {
		if a.at != b.at {
			return a.at - b.at
		}
		return a.order - b.order
	})
	var b strings.Builder
	b.Grow(len(in.text) + 64*len(in.inserts))
	in.out.shifts = map[int][]shift{}
	last, line, lineStart := 0, 0, 0
	for _, ins := range in.inserts {
		for i := last; i < ins.at; i++ {
			if in.text[i] == '\n' {
				line++
				lineStart = i + 1
			}
		}
		b.WriteString(in.text[last:ins.at])
		last = ins.at
		// The column (0-based, as text/template counts) where the insertion
		// starts in the instrumented text.
		col := ins.at - lineStart
		for _, s := range in.out.shifts[line] {
			col += s.n
		}
		in.out.shifts[line] = append(in.out.shifts[line], shift{col: col, n: len(ins.text)})
		b.WriteString(ins.text)
	}
	b.WriteString(in.text[last:])
	return b.String()
}

// errorPosition is where text/template errors name a place: tmpl:LINE:COL.
var errorPosition = regexp.MustCompile(`tmpl:(\d+):(\d+)`)

// originalPositions rewrites the tmpl:LINE:COL places of msg into the columns
// of the text as written.
func (in *instrumented) originalPositions(msg string) string {
	return errorPosition.ReplaceAllStringFunc(msg, func(m string) string {
		parts := errorPosition.FindStringSubmatch(m)
		line, _ := strconv.Atoi(parts[1])
		col, _ := strconv.Atoi(parts[2])
		orig := col
		for _, s := range in.shifts[line-1] {
			if s.col <= col {
				orig -= min(s.n, col-s.col)
			}
		}
		return fmt.Sprintf("tmpl:%d:%d", line, max(orig, 0))
	})
}
