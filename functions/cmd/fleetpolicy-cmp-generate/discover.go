package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// discover is the plugin's discovery rule, which was
// `grep -rlsE '^apiVersion: *fn[.]fleetpolicy[.]io/' . || true`: it writes to
// w the path ("./" and the slash-separated path under root) of every regular
// file under root with a line that starts with "apiVersion:", any number of
// spaces and "fn.fleetpolicy.io/" (the functionConfig of a fleetpolicy KRM
// function), one a line. Argo CD picks the plugin when that output is not
// empty.
//
// As grep -r does, it descends into every directory (hidden ones too) but
// follows no symbolic link below root, reads no device, FIFO or socket, and,
// as -s and `|| true` did, skips what it cannot read without a word: it
// returns an error only when writing to w fails.
func discover(root string, w io.Writer) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // unreadable directories and files are skipped, as is anything but a file
		}
		if !declaresFunctionConfig(path) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return nil
		}
		_, err = fmt.Fprintln(w, "./"+filepath.ToSlash(rel))
		return err
	})
}

// declaresFunctionConfig tells whether the file at path has a line that
// matches ^apiVersion: *fn[.]fleetpolicy[.]io/; false when it cannot be read.
func declaresFunctionConfig(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var m lineMatcher
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if m.feed(buf[:n]) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// The line prefix discovery looks for: apiKey, any number of spaces, fnGroup.
const (
	apiKey  = "apiVersion:"
	fnGroup = "fn.fleetpolicy.io/"
)

// lineMatcher matches ^apiVersion: *fn[.]fleetpolicy[.]io/ against a stream
// fed in pieces of any size, lines ending in \n.
type lineMatcher struct {
	state matchState
	i     int // bytes of apiKey or fnGroup matched so far
}

type matchState int

const (
	inKey    matchState = iota // at the start of a line: i bytes of apiKey matched
	inSpaces                   // past apiKey
	inGroup                    // past the spaces: i bytes of fnGroup matched
	skipLine                   // the line cannot match
)

// feed reads b and tells whether a line has matched.
func (m *lineMatcher) feed(b []byte) bool {
	for k := 0; k < len(b); k++ {
		c := b[k]
		if c == '\n' {
			m.state, m.i = inKey, 0
			continue
		}
		switch m.state {
		case inKey:
			if c != apiKey[m.i] {
				m.state = skipLine
				break
			}
			if m.i++; m.i == len(apiKey) {
				m.state = inSpaces
			}
		case inSpaces:
			if c == ' ' {
				break
			}
			m.state, m.i = inGroup, 0
			k-- // c is the first byte of fnGroup, or not
		case inGroup:
			if c != fnGroup[m.i] {
				m.state = skipLine
				break
			}
			if m.i++; m.i == len(fnGroup) {
				return true
			}
		case skipLine:
			next := bytes.IndexByte(b[k:], '\n')
			if next < 0 {
				return false
			}
			k += next - 1 // the loop's k++ lands on the \n
		}
	}
	return false
}
