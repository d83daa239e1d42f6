package imagee2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// node is the running e2e node the tests use.
type node struct {
	kubeconfig, kubectl, images, tag string
}

func nodeFor(t *testing.T) node {
	t.Helper()
	dir := os.Getenv("FLEETPOLICY_E2E_NODE")
	if dir == "" {
		t.Skip("no e2e node: FLEETPOLICY_E2E_NODE is unset (make e2e starts one and sets it)")
	}
	n := node{
		kubeconfig: filepath.Join(dir, "admin.kubeconfig"),
		kubectl:    os.Getenv("FLEETPOLICY_E2E_KUBECTL"),
		images:     envOr("FLEETPOLICY_E2E_IMAGES", "ghcr.io/fleetpolicy"),
		tag:        envOr("FLEETPOLICY_E2E_IMAGE_TAG", "dev"),
	}
	if n.kubectl == "" {
		n.kubectl = filepath.Join(krmtest.RepoRoot(t), "bin", "kubectl")
	}
	return n
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func (n node) image(name string) string { return n.images + "/" + name + ":" + n.tag }

// podSpec is the part of a Pod the tests set, as kubectl run's --overrides.
type podSpec struct {
	Command    []string
	Env        map[string]string
	WorkingDir string
	HostDir    string // mounted at WorkingDir when set
	User       int64
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

// podName is a DNS label for a Pod of the test.
func podName(parts ...string) string {
	s := unsafeName.ReplaceAllString(strings.ToLower(strings.Join(parts, "-")), "-")
	if len(s) > 50 {
		s = s[:50]
	}
	return strings.Trim(s, "-") + fmt.Sprintf("-%d", time.Now().UnixNano()%100000)
}

// run runs image as a Pod that exits (restartPolicy Never), waits for it and
// removes it. With stdin, the Pod's standard input is attached (kubectl run
// --stdin): the container blocks reading it until kubectl has attached, and
// stdout and stderr come apart; it returns them and the exit code. Without,
// a command that reads no input could end before kubectl attaches and its
// output would be lost: the Pod runs detached and its log (stdout and stderr
// together, returned as stdout) is read once it has ended.
func (n node) run(t *testing.T, name, image string, stdin []byte, spec podSpec) (stdout, stderr string, code int) {
	t.Helper()
	container := map[string]any{
		"name": name, "image": image, "imagePullPolicy": "Never",
		"stdin": stdin != nil, "stdinOnce": stdin != nil,
		"securityContext": map[string]any{
			"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
			"capabilities": map[string]any{"drop": []string{"ALL"}},
		},
	}
	if spec.Command != nil {
		container["command"] = spec.Command
	}
	var env []map[string]string
	for k, v := range spec.Env {
		env = append(env, map[string]string{"name": k, "value": v})
	}
	slices.SortFunc(env, func(a, b map[string]string) int { return strings.Compare(a["name"], b["name"]) })
	if env != nil {
		container["env"] = env
	}
	podSpec := map[string]any{
		"restartPolicy":   "Never",
		"securityContext": map[string]any{"runAsNonRoot": true, "seccompProfile": map[string]any{"type": "RuntimeDefault"}},
		"containers":      []any{container},
	}
	if spec.User != 0 {
		podSpec["securityContext"].(map[string]any)["runAsUser"] = spec.User
	}
	if spec.WorkingDir != "" {
		container["workingDir"] = spec.WorkingDir
	}
	if spec.HostDir != "" {
		container["volumeMounts"] = []any{map[string]any{"name": "work", "mountPath": spec.WorkingDir}}
		podSpec["volumes"] = []any{map[string]any{"name": "work", "hostPath": map[string]any{"path": spec.HostDir, "type": "Directory"}}}
	}
	overrides, err := json.Marshal(map[string]any{"apiVersion": "v1", "spec": podSpec})
	if err != nil {
		t.Fatal(err)
	}
	if stdin == nil {
		return n.runDetached(t, name, image, string(overrides))
	}
	cmd := exec.CommandContext(t.Context(), n.kubectl, "--kubeconfig", n.kubeconfig, "--namespace", "default",
		"run", name, "--image", image, "--image-pull-policy", "Never", "--restart", "Never",
		"--stdin", "--rm", "--quiet", "--pod-running-timeout", "2m", "--overrides", string(overrides))
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	code = 0
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("kubectl run %s: %v", name, err)
		}
		code = exit.ExitCode()
	}
	return out.String(), errOut.String(), code
}

func (n node) kubectlOutput(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), n.kubectl, append([]string{"--kubeconfig", n.kubeconfig, "--namespace", "default"}, args...)...).Output()
	if err != nil {
		msg := ""
		if exit, ok := err.(*exec.ExitError); ok {
			msg = string(exit.Stderr)
		}
		t.Fatalf("kubectl %v: %v %s", args, err, msg)
	}
	return string(out)
}

// runDetached runs the Pod without attaching, waits (2 minutes at most) for
// it to end, and returns its log and its container's exit code.
func (n node) runDetached(t *testing.T, name, image, overrides string) (string, string, int) {
	t.Helper()
	n.kubectlOutput(t, "run", name, "--image", image, "--image-pull-policy", "Never", "--restart", "Never", "--overrides", overrides)
	defer n.kubectlOutput(t, "delete", "pod", name, "--wait=false")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		phase := n.kubectlOutput(t, "get", "pod", name, "-o", "jsonpath={.status.phase}")
		if phase == "Succeeded" || phase == "Failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s still %s after 2 minutes", name, phase)
		}
		time.Sleep(200 * time.Millisecond)
	}
	code, err := strconv.Atoi(n.kubectlOutput(t, "get", "pod", name, "-o", "jsonpath={.status.containerStatuses[0].state.terminated.exitCode}"))
	if err != nil {
		t.Fatalf("pod %s: exit code: %v", name, err)
	}
	return n.kubectlOutput(t, "logs", name), "", code
}

// functions are the KRM functions, functions/*/main.go, as the Makefile's
// FUNCTION_BINARIES (each has an image).
func functions(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob(filepath.Join(krmtest.RepoRoot(t), "functions", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		t.Fatalf("no functions/*/main.go: %v", err)
	}
	var names []string
	for _, m := range mains {
		names = append(names, filepath.Base(filepath.Dir(m)))
	}
	return names
}

// TestFunctionImagesRunAsContainers runs each function's image as a Pod on
// two of its golden cases: the first that succeeds and the first whose
// expected results hold an error (exit code 1), among those that read no file. The container's stdout must be expected.yaml
// byte for byte, as the in-process golden tests check it.
func TestFunctionImagesRunAsContainers(t *testing.T) {
	n := nodeFor(t)
	for _, fn := range functions(t) {
		t.Run(fn, func(t *testing.T) {
			t.Parallel()
			cases := krmtest.Cases(t, filepath.Join(krmtest.RepoRoot(t), "functions", fn, "testdata"))
			var picked []krmtest.Case
			for _, wantCode := range []int{0, 1} {
				for _, c := range cases {
					// A case whose config names files of the repository
					// (../../examples) needs them in the working directory.
					if c.ExpectedResults(t).ExitCode() == wantCode && !bytes.Contains(c.Config, []byte("../")) {
						picked = append(picked, c)
						break
					}
				}
			}
			for _, c := range picked {
				start := time.Now()
				out, stderr, code := n.run(t, podName(fn, c.Name), n.image(fn), c.ResourceList(t), podSpec{})
				want := string(c.Expected(t))
				if out != want {
					t.Errorf("case %s: the image's output differs from expected.yaml:\n--- got\n%s\n--- want\n%s\n--- stderr\n%s", c.Name, out, want, stderr)
				}
				if wantCode := c.ExpectedResults(t).ExitCode(); code != wantCode {
					t.Errorf("case %s: exit code %d, want %d; stderr:\n%s", c.Name, code, wantCode, stderr)
				}
				t.Logf("case %s: %s as a Pod in %s", c.Name, n.image(fn), time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// TestArgoCDSidecarRendersTheExampleApp runs the plugin's three commands, each
// as the sidecar image's container, in one copy of examples/argocd/app (the
// sidecar's private copy of the repository), in the order argocd-cmp-server
// runs them: discover finds the app's functionConfig, init applies the
// parameter remediation-action=enforce to the copy, and generate renders it
// through kustomize and the validate-dependencies function of the image.
func TestArgoCDSidecarRendersTheExampleApp(t *testing.T) {
	n := nodeFor(t)
	const argocdUID = 999 // the sidecar's user (hack/imagebuild)
	app := copyApp(t, filepath.Join(krmtest.RepoRoot(t), "examples", "argocd", "app"), argocdUID)
	image := n.image("fleetpolicy-argocd-cmp")
	env := map[string]string{
		"ARGOCD_APP_NAME": "fleetpolicy-e2e", "ARGOCD_APP_NAMESPACE": "policies",
		"ARGOCD_APP_SOURCE_PATH": "examples/argocd/app", "KUBE_VERSION": "1.35.4",
		"ARGOCD_APP_PARAMETERS":    `[{"name":"remediation-action","string":"enforce"}]`,
		"PARAM_REMEDIATION_ACTION": "enforce",
	}
	run := func(what string, command ...string) (string, string) {
		t.Helper()
		start := time.Now()
		out, stderr, code := n.run(t, podName("cmp", what), image, nil,
			podSpec{Command: command, Env: env, WorkingDir: "/tmp/app", HostDir: app, User: argocdUID})
		if code != 0 {
			t.Fatalf("%v in the sidecar image exited %d:\n%s\n%s", command, code, out, stderr)
		}
		t.Logf("%v: %s", command, time.Since(start).Round(time.Millisecond))
		return out, stderr
	}

	out, _ := run("discover", "fleetpolicy-cmp-generate", "discover")
	if !strings.Contains(out, "validate-dependencies.yaml") {
		t.Errorf("discover printed %q, want the app's validate-dependencies.yaml", out)
	}
	before, err := os.ReadFile(filepath.Join(app, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	run("init", "fleetpolicy-cmp-generate", "init")
	after, err := os.ReadFile(filepath.Join(app, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, after) {
		t.Errorf("init left kustomization.yaml unchanged; want the remediation-action patch added")
	}
	out, _ = run("generate", "fleetpolicy-cmp-generate")
	objs, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("generate printed no manifests: %v\n%s", err, out)
	}
	policies := 0
	for _, o := range objs {
		if o.GetKind() != "Policy" {
			continue
		}
		policies++
		if action, _ := o.GetString("spec.remediationAction"); action != "enforce" {
			t.Errorf("Policy %s rendered with remediationAction %q, want enforce (the parameter)", o.GetName(), action)
		}
	}
	if policies == 0 {
		t.Errorf("generate rendered no Policy:\n%s", out)
	}
}

// copyApp copies dir to a new directory the container's user uid owns.
func copyApp(t *testing.T, src string, uid int) string {
	t.Helper()
	dst, err := os.MkdirTemp("", "fleetpolicy-e2e-app-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dst) })
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		} else {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				return err
			}
		}
		return os.Lchown(target, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}
