package krm

import (
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// restyleScalarsTheEncoderGetsWrong changes the style of every scalar under n
// that the YAML encoder (go.yaml.in/yaml/v3, the one kyaml uses) would write
// with another value, or as text no YAML parser reads, to a style it writes
// faithfully. Every other scalar keeps its style.
//
//   - A folded scalar gains a line break before a more-indented line (one
//     starting with a space or a tab) and after the last line when it keeps
//     its trailing breaks, and its long more-indented lines are folded
//     (go-yaml/yaml#804): "a\n b" would be read back as "a\n\n b", one break
//     more on every pass through a function. It is written in literal style,
//     which holds the same value and is written as it is.
//   - A block scalar whose first character is a tab is written without the
//     indentation indicator it needs, and the parser refuses the text. It is
//     written double-quoted, as the encoder already writes such a value on one
//     line.
func restyleScalarsTheEncoderGetsWrong(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode {
		block := yaml.FoldedStyle | yaml.LiteralStyle
		switch {
		case strings.HasPrefix(n.Value, "\t") && (n.Style&block != 0 || n.Style == 0 && strings.ContainsAny(n.Value, yamlBreaks)):
			n.Style = n.Style&^block | yaml.DoubleQuotedStyle
		case n.Style&yaml.FoldedStyle != 0 && foldedLosesValue(n.Value):
			n.Style = n.Style&^yaml.FoldedStyle | yaml.LiteralStyle
		}
	}
	for _, c := range n.Content {
		restyleScalarsTheEncoderGetsWrong(c)
	}
}

// yamlBreaks are the characters YAML reads as line breaks.
const yamlBreaks = "\r\n\u0085\u2028\u2029"

// foldedLosesValue reports whether the encoder may write a folded scalar of
// this value with a different value: one with a line (the first included) that
// starts with a space or a tab, or that ends with more than one line break.
// It errs on the side of literal style.
func foldedLosesValue(value string) bool {
	if strings.HasPrefix(value, " ") || strings.HasPrefix(value, "\t") {
		return true
	}
	for i, r := range value {
		if strings.ContainsRune(yamlBreaks, r) {
			next := i + utf8.RuneLen(r)
			if next < len(value) && (value[next] == ' ' || value[next] == '\t') {
				return true
			}
		}
	}
	trimmed := strings.TrimRight(value, yamlBreaks)
	return utf8.RuneCountInString(value[len(trimmed):]) > 1
}
