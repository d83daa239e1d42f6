package imagetest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction: its keyword, upper-cased, and its
// arguments, continuation lines joined.
type instruction struct {
	Keyword, Args string
	Line          int
}

// stage is a build stage: FROM Base [AS Name] and the instructions after it.
type stage struct {
	Base, Name   string
	Instructions []instruction
}

type dockerfile struct {
	Path   string
	Stages []stage
}

// final is the stage the image is made of.
func (d dockerfile) final() stage { return d.Stages[len(d.Stages)-1] }

// last is the last instruction of the stage with keyword, and whether there is one.
func (s stage) last(keyword string) (instruction, bool) {
	for i := len(s.Instructions) - 1; i >= 0; i-- {
		if s.Instructions[i].Keyword == keyword {
			return s.Instructions[i], true
		}
	}
	return instruction{}, false
}

var argReference = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

// parseDockerfile reads the subset of the Dockerfile syntax our Dockerfiles
// use: comment lines, backslash continuations, global ARGs with defaults
// (expanded in FROM), and stages.
func parseDockerfile(path string) (dockerfile, error) {
	f, err := os.Open(path)
	if err != nil {
		return dockerfile{}, err
	}
	defer f.Close()
	d := dockerfile{Path: path}
	globalArgs := map[string]string{}
	var pending strings.Builder
	start := 0
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if pending.Len() == 0 {
			start = n
		}
		if body, more := strings.CutSuffix(line, `\`); more {
			pending.WriteString(body)
			continue
		}
		pending.WriteString(line)
		text := pending.String()
		pending.Reset()
		keyword, args, _ := strings.Cut(text, " ")
		in := instruction{Keyword: strings.ToUpper(keyword), Args: strings.TrimSpace(args), Line: start}
		switch {
		case in.Keyword == "FROM":
			s, err := parseFrom(in.Args, globalArgs)
			if err != nil {
				return d, fmt.Errorf("%s:%d: %w", path, in.Line, err)
			}
			d.Stages = append(d.Stages, s)
		case len(d.Stages) == 0 && in.Keyword == "ARG":
			name, value, _ := strings.Cut(in.Args, "=")
			globalArgs[name] = value
		case len(d.Stages) == 0:
			return d, fmt.Errorf("%s:%d: %s before the first FROM", path, in.Line, in.Keyword)
		default:
			s := &d.Stages[len(d.Stages)-1]
			s.Instructions = append(s.Instructions, in)
		}
	}
	if err := scanner.Err(); err != nil {
		return d, err
	}
	if pending.Len() > 0 {
		return d, fmt.Errorf("%s: the last instruction ends with a backslash", path)
	}
	if len(d.Stages) == 0 {
		return d, fmt.Errorf("%s: no FROM", path)
	}
	return d, nil
}

func parseFrom(args string, globalArgs map[string]string) (stage, error) {
	var fields []string
	for _, f := range strings.Fields(args) {
		if !strings.HasPrefix(f, "--") { // --platform
			fields = append(fields, f)
		}
	}
	var s stage
	switch {
	case len(fields) == 1:
	case len(fields) == 3 && strings.EqualFold(fields[1], "AS"):
		s.Name = fields[2]
	default:
		return s, fmt.Errorf("FROM %s: want an image and an optional AS name", args)
	}
	var unknown []string
	s.Base = argReference.ReplaceAllStringFunc(fields[0], func(ref string) string {
		m := argReference.FindStringSubmatch(ref)
		name := m[1] + m[2]
		value, ok := globalArgs[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return value
	})
	if len(unknown) > 0 {
		return s, fmt.Errorf("FROM %s: no global ARG %v", args, unknown)
	}
	return s, nil
}

// user is the numeric uid and gid of a USER instruction ("uid" or "uid:gid").
func user(args string) (uid, gid int, err error) {
	u, g, hasGroup := strings.Cut(args, ":")
	if uid, err = strconv.Atoi(u); err != nil {
		return 0, 0, fmt.Errorf("USER %s: not a numeric uid (Kubernetes' runAsNonRoot can only check numeric users)", args)
	}
	gid = uid
	if hasGroup {
		if gid, err = strconv.Atoi(g); err != nil {
			return 0, 0, fmt.Errorf("USER %s: not a numeric gid", args)
		}
	}
	return uid, gid, nil
}

// entrypoint is the exec-form ENTRYPOINT of args.
func entrypoint(args string) ([]string, error) {
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil || len(argv) == 0 {
		return nil, fmt.Errorf("ENTRYPOINT %s: want the exec form, a JSON array (the base image has no shell)", args)
	}
	return argv, nil
}

// copySources are the build-context sources of a COPY, and its --from stage
// ("" for the build context).
func copySources(args string) (sources []string, from string) {
	fields := strings.Fields(args)
	for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
		if v, ok := strings.CutPrefix(fields[0], "--from="); ok {
			from = v
		}
		fields = fields[1:]
	}
	if len(fields) < 2 {
		return nil, from
	}
	return fields[:len(fields)-1], from
}

func TestParseDockerfile(t *testing.T) {
	path := t.TempDir() + "/Dockerfile"
	content := `# syntax=docker/dockerfile:1
ARG GO_IMAGE=golang:1.26
ARG BASE=gcr.io/distroless/static-debian12
FROM ${GO_IMAGE} AS build
RUN go build \
    # a comment inside a continuation
    -o /out/x .
FROM --platform=linux/amd64 $BASE:nonroot
COPY --from=build /out/x /x
USER 65532:65532
ENTRYPOINT ["/x"]
`
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := parseDockerfile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Stages) != 2 || d.Stages[0].Base != "golang:1.26" || d.Stages[0].Name != "build" ||
		d.final().Base != "gcr.io/distroless/static-debian12:nonroot" {
		t.Fatalf("stages %+v", d.Stages)
	}
	if run := d.Stages[0].Instructions[0]; run.Keyword != "RUN" || run.Args != "go build -o /out/x ." || run.Line != 5 {
		t.Errorf("RUN %+v", run)
	}
	if u, _ := d.final().last("USER"); u.Args != "65532:65532" {
		t.Errorf("USER %+v", u)
	}

	for name, bad := range map[string]string{
		"instruction before FROM": "RUN true\nFROM scratch\n",
		"unknown ARG":             "FROM ${NOPE}:1\n",
		"dangling continuation":   "FROM scratch\nRUN true \\\n",
		"no FROM":                 "ARG A=1\n",
		"FROM with junk":          "FROM a b c d\n",
	} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := parseDockerfile(path); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

func TestUserAndEntrypoint(t *testing.T) {
	for args, want := range map[string][2]int{"65532:65532": {65532, 65532}, "999": {999, 999}, "10:20": {10, 20}} {
		uid, gid, err := user(args)
		if err != nil || uid != want[0] || gid != want[1] {
			t.Errorf("user(%q) = %d, %d, %v; want %v", args, uid, gid, err, want)
		}
	}
	for _, bad := range []string{"nonroot", "1000:staff", ""} {
		if _, _, err := user(bad); err == nil {
			t.Errorf("user(%q): no error", bad)
		}
	}
	if argv, err := entrypoint(`["/usr/local/bin/function"]`); err != nil || argv[0] != "/usr/local/bin/function" {
		t.Errorf("entrypoint: %v, %v", argv, err)
	}
	for _, bad := range []string{"/usr/local/bin/function", "[]"} {
		if _, err := entrypoint(bad); err == nil {
			t.Errorf("entrypoint(%q): no error", bad)
		}
	}
}
