package argocdtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// The example, relative to the repository root.
const (
	exampleDir         = "examples/argocd"
	examplePlugin      = "examples/argocd/plugin.yaml"
	exampleApplication = "examples/argocd/application.yaml"
	exampleInstall     = "examples/argocd/install"
)

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	return filepath.Join(krmtest.RepoRoot(t), filepath.FromSlash(rel))
}

// checkout copies the example, at its path in the repository, as the sidecar
// receives a repository, and returns the path of app in the copy.
func checkout(t *testing.T, plugin pluginConfig, app application) string {
	t.Helper()
	work := t.TempDir()
	copyRepo(t, repoPath(t, exampleDir), filepath.Join(work, filepath.FromSlash(exampleDir)), plugin.Spec.PreserveFileMode)
	appDir := filepath.Join(work, filepath.FromSlash(app.Spec.Source.Path))
	if _, err := os.Stat(appDir); err != nil {
		t.Fatalf("the Application's spec.source.path: %v", err)
	}
	return appDir
}

// withParameters is app with its plugin parameters replaced.
func withParameters(app application, params ...parameter) application {
	plugin := *app.Spec.Source.Plugin
	plugin.Parameters = params
	app.Spec.Source.Plugin = &plugin
	return app
}

func stringParam(name, value string) parameter { return parameter{Name: name, String: &value} }

// objectKey names an object as "Kind namespace/name".
func objectKey(obj map[string]any) string {
	return obj["kind"].(string) + " " + nestedString(obj, "metadata", "namespace") + "/" + nestedString(obj, "metadata", "name")
}

func nestedString(obj map[string]any, fields ...string) string {
	s, _ := krmtest.Field(obj, fields...).(string)
	return s
}

func TestPluginConfig(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	if p.APIVersion != "argoproj.io/v1alpha1" {
		t.Errorf("apiVersion %q, want argoproj.io/v1alpha1", p.APIVersion)
	}
	if p.Spec.PreserveFileMode || p.Spec.ProvideGitCreds {
		t.Errorf("preserveFileMode %v, provideGitCreds %v: the plugin needs neither executable repository files nor git credentials",
			p.Spec.PreserveFileMode, p.Spec.ProvideGitCreds)
	}
	// One binary holds the plugin's commands: no shell, no script.
	self := filepath.Base(generateCommand)
	for _, c := range []struct {
		name    string
		command command
		want    []string
	}{
		{"init", p.Spec.Init, []string{self, "init"}},
		{"generate", p.Spec.Generate, []string{self}}, // checks the app's functions, then runs kustomize
		{"discover.find", p.Spec.Discover.Find.command, []string{self, "discover"}},
	} {
		if got := append(slices.Clone(c.command.Command), c.command.Args...); !slices.Equal(got, c.want) {
			t.Errorf("%s %v, want %v", c.name, got, c.want)
		}
	}
	if d := p.Spec.Discover; d.FileName != "" || d.Find.Glob != "" {
		t.Errorf("discover.fileName %q, discover.find.glob %q: Argo CD would use them instead of the find command", d.FileName, d.Find.Glob)
	}
	if c := p.Spec.Parameters.Dynamic; len(c.Command) > 0 {
		t.Errorf("parameters.dynamic %v: the plugin announces static parameters only", c.Command)
	}
	for _, a := range p.Spec.Parameters.Static {
		if a.CollectionType != "string" || a.String == nil || *a.String != "" {
			t.Errorf("parameter %s: want a string parameter announcing the empty default (Argo CD does not send defaults; unset keeps the repository's values)", a.Name)
		}
	}
}

// TestPluginCommandsAreTheSidecars: every command plugin.yaml runs is found
// on the sidecar's PATH, which holds the functions, fleetpolicy-cmp-generate
// and kustomize and no shell, and is one of the binaries this repository
// builds; hack/imagebuild's TestSidecarImage checks that the image holds them.
func TestPluginCommandsAreTheSidecars(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	s := newSidecar(t, p)
	for name, c := range map[string]command{"init": p.Spec.Init, "generate": p.Spec.Generate, "discover.find": p.Spec.Discover.Find.command} {
		if len(c.Command) == 0 {
			t.Errorf("%s has no command", name)
			continue
		}
		path, err := s.lookPath(c.Command[0])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if filepath.Dir(path) != functionBinaries(t) {
			t.Errorf("%s runs %s (%s), not one of the binaries the sidecar image builds from this repository", name, c.Command[0], path)
		}
	}
}

func TestApplicationNamesAnnouncedParameters(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	if got := app.Spec.Source.Plugin.Name; got != p.fullName() {
		t.Errorf("the Application names plugin %q; Argo CD knows it as %q", got, p.fullName())
	}
	for _, param := range app.Spec.Source.Plugin.Parameters {
		if !slices.ContainsFunc(p.Spec.Parameters.Static, func(a announcement) bool { return a.Name == param.Name }) {
			t.Errorf("the Application sets parameter %q, which plugin.yaml does not announce", param.Name)
		}
	}
}

// wantObjects are the objects examples/argocd/app renders.
var wantObjects = []string{
	"Placement policies/production",
	"PlacementBinding policies/payments-production",
	"Policy policies/payments-namespace",
	"Policy policies/payments-operator",
}

func TestApplicationRendersOnlyTheManifests(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	s := newSidecar(t, p)
	appDir := checkout(t, p, app)
	env := requestEnv(t, app)
	// The Application names the plugin, and the plugin has a discovery rule:
	// Argo CD then uses the plugin only if the rule matches.
	if !s.matches(t, appDir, env) {
		t.Fatal("the plugin's discovery rule does not match the Application's path")
	}

	r := s.generate(t, appDir, env)
	if r.Err != nil {
		t.Fatalf("manifest generation failed: %v\nstderr:\n%s", r.Err, r.Stderr)
	}
	var got []string
	for _, obj := range manifests(t, r.Stdout) {
		got = append(got, objectKey(obj))
		annotations, _ := krmtest.Field(obj, "metadata", "annotations").(map[string]any)
		for key := range annotations {
			if strings.Contains(key, "config.kubernetes.io/") || strings.Contains(key, "config.k8s.io/") {
				t.Errorf("%s carries the orchestration annotation %s", objectKey(obj), key)
			}
		}
		if obj["kind"] == "Policy" {
			if action := nestedString(obj, "spec", "remediationAction"); action != "inform" {
				t.Errorf("%s: spec.remediationAction %q, want inform (the Application's remediation-action parameter)", objectKey(obj), action)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, wantObjects) {
		t.Errorf("rendered objects %v, want %v\nstdout:\n%s", got, wantObjects, r.Stdout)
	}
}

func TestUnsetParametersKeepTheRepository(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := withParameters(loadApplication(t, repoPath(t, exampleApplication)))
	s := newSidecar(t, p)
	appDir := checkout(t, p, app)

	r := s.generate(t, appDir, requestEnv(t, app))
	if r.Err != nil {
		t.Fatalf("manifest generation failed: %v\nstderr:\n%s", r.Err, r.Stderr)
	}
	// Exactly what kustomize renders from the repository's own files.
	cmd := exec.CommandContext(t.Context(), krmtest.Kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec",
		repoPath(t, app.Spec.Source.Path))
	cmd.Env = s.env
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build of the repository: %v", err)
	}
	if r.Stdout != string(want) {
		t.Errorf("generate printed\n%s\nwant what kustomize renders from the repository:\n%s", r.Stdout, want)
	}
	for _, obj := range manifests(t, r.Stdout) {
		if obj["kind"] == "Policy" && nestedString(obj, "spec", "remediationAction") != "enforce" {
			t.Errorf("%s: spec.remediationAction %q, want the repository's enforce", objectKey(obj), nestedString(obj, "spec", "remediationAction"))
		}
	}
}

func TestPolicyMistakeFailsWithTheFunctionsMessage(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	s := newSidecar(t, p)
	appDir := checkout(t, p, app)
	broken, err := os.ReadFile("testdata/policies-with-cycle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(appDir, "policies.yaml"), broken, 0o644); err != nil {
		t.Fatal(err)
	}

	r := s.generate(t, appDir, requestEnv(t, app))
	if r.Err == nil {
		t.Fatalf("manifest generation succeeded on a dependency cycle; stdout:\n%s", r.Stdout)
	}
	// Argo CD shows stderr; with prune, any stdout could be taken for the
	// (smaller) set of manifests.
	const want = "validate-dependencies: error: Policy policies/payments-"
	if !strings.Contains(r.Stderr, want) || !strings.Contains(r.Stderr, "dependency cycle") {
		t.Errorf("stderr does not show the function's message %q... dependency cycle:\n%s", want, r.Stderr)
	}
	if r.Stdout != "" {
		t.Errorf("a failed generation printed to stdout:\n%s", r.Stdout)
	}
}

func TestBadParametersFailInit(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	s := newSidecar(t, p)
	cases := []struct {
		name      string
		params    []parameter
		wantError string
	}{
		{"unknown value", []parameter{stringParam("remediation-action", "delete")},
			`parameter remediation-action: "delete" is neither inform nor enforce`},
		{"JSON injection", []parameter{stringParam("remediation-action", `inform"}, {"op": "remove", "path": "/spec`)},
			`parameter remediation-action: "inform"}, {"op": "remove", "path": "/spec" is neither inform nor enforce`},
		{"unknown parameter", []parameter{stringParam("overlay", "prod")},
			"unknown parameter PARAM_OVERLAY"},
		{"array instead of string", []parameter{{Name: "remediation-action", Array: []string{"inform"}}},
			"unknown parameter PARAM_REMEDIATION_ACTION_0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			appDir := checkout(t, p, app)
			kustomization := filepath.Join(appDir, "kustomization.yaml")
			before, err := os.ReadFile(kustomization)
			if err != nil {
				t.Fatal(err)
			}
			r := s.generate(t, appDir, requestEnv(t, withParameters(app, tc.params...)))
			if r.Err == nil {
				t.Fatalf("manifest generation succeeded; stdout:\n%s", r.Stdout)
			}
			if !strings.Contains(r.Stderr, tc.wantError) {
				t.Errorf("stderr %q does not say %q", r.Stderr, tc.wantError)
			}
			if r.Stdout != "" {
				t.Errorf("stdout %q, want nothing", r.Stdout)
			}
			if after, _ := os.ReadFile(kustomization); string(after) != string(before) {
				t.Errorf("init changed kustomization.yaml although it refused the parameters:\n%s", after)
			}
		})
	}
}

func TestDiscoveryLeavesPlainKustomizeApps(t *testing.T) {
	p := loadPlugin(t, repoPath(t, examplePlugin))
	app := loadApplication(t, repoPath(t, exampleApplication))
	s := newSidecar(t, p)
	plain := t.TempDir()
	for name, content := range map[string]string{
		"kustomization.yaml": "resources:\n- configmap.yaml\n",
		"configmap.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  note: not fn.fleetpolicy.io/v1alpha1\n",
	} {
		if err := os.WriteFile(filepath.Join(plain, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s.matches(t, plain, requestEnv(t, app)) {
		t.Error("the plugin's discovery rule claims a plain kustomize app")
	}
}

func TestRepositoryFilesLoseExecBits(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "app"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "app", "render.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		preserveFileMode    bool
		wantDir, wantScript os.FileMode
	}{
		{preserveFileMode: false, wantDir: 0o755, wantScript: 0o644},
		{preserveFileMode: true, wantDir: 0o700, wantScript: 0o755},
	} {
		dst := t.TempDir()
		copyRepo(t, src, dst, tc.preserveFileMode)
		for path, want := range map[string]os.FileMode{"app": tc.wantDir, "app/render.sh": tc.wantScript} {
			info, err := os.Stat(filepath.Join(dst, path))
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("preserveFileMode %v: %s has mode %v, want %v", tc.preserveFileMode, path, got, want)
			}
		}
	}
}

func TestParameterEnvironment(t *testing.T) {
	env, err := parameterEnv([]parameter{
		stringParam("remediation-action", "inform"),
		{Name: "values-files", Array: []string{"a.yaml", "b.yaml"}},
		{Name: "helm-parameters", Map: map[string]string{"image.tag": "v1.2.3"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`ARGOCD_APP_PARAMETERS=[{"name":"remediation-action","string":"inform"},{"array":["a.yaml","b.yaml"],"name":"values-files"},{"map":{"image.tag":"v1.2.3"},"name":"helm-parameters"}]`,
		"PARAM_REMEDIATION_ACTION=inform",
		"PARAM_VALUES_FILES_0=a.yaml",
		"PARAM_VALUES_FILES_1=b.yaml",
		"PARAM_HELM_PARAMETERS_IMAGE_TAG=v1.2.3",
	}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("parameterEnv:\n%q\nwant\n%q", env, want)
	}
}

func TestPluginEnvInterpolation(t *testing.T) {
	build := []string{"ARGOCD_APP_REVISION=abc", "ARGOCD_APP_NAME=payments"}
	for in, want := range map[string]string{
		"test-$ARGOCD_APP_REVISION":    "test-abc",
		"${ARGOCD_APP_NAME}-x":         "payments-x",
		"$$ARGOCD_APP_NAME":            "$ARGOCD_APP_NAME",
		"$UNSET-y":                     "-y",
		"plain":                        "plain",
		"$ARGOCD_APP_NAME/$$/$UNSET/z": "payments/$//z",
	} {
		if got := envsubst(in, build); got != want {
			t.Errorf("envsubst(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRepoServerPatchAddsTheSidecar(t *testing.T) {
	kustomize := krmtest.Kustomize(t)
	install := repoPath(t, exampleInstall)
	dir := t.TempDir()
	copyRepo(t, install, dir, false)
	// Build the install kustomization over the fixture instead of Argo CD's
	// released install.yaml, which is on the network.
	kustomization := filepath.Join(dir, "kustomization.yaml")
	b, err := os.ReadFile(kustomization)
	if err != nil {
		t.Fatal(err)
	}
	var k map[string]any
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	resources, _ := k["resources"].([]any)
	if len(resources) != 1 || !strings.HasSuffix(resources[0].(string), "/manifests/install.yaml") {
		t.Fatalf("install/kustomization.yaml: resources %v, want only Argo CD's install.yaml", resources)
	}
	k["resources"] = []string{"argocd-repo-server.yaml"}
	if b, err = yaml.Marshal(k); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile("testdata/argocd-repo-server.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{"kustomization.yaml": b, "argocd-repo-server.yaml": fixture} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.CommandContext(t.Context(), kustomize, "build", dir).Output()
	if err != nil {
		t.Fatalf("kustomize build: %v", err)
	}
	var deployment struct {
		Metadata struct{ Namespace string } `yaml:"metadata"`
		Spec     struct {
			Template struct {
				Spec struct {
					Containers     []container `yaml:"containers"`
					InitContainers []container `yaml:"initContainers"`
					Volumes        []volume    `yaml:"volumes"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(out, &deployment); err != nil {
		t.Fatal(err)
	}
	pod := deployment.Spec.Template.Spec
	if deployment.Metadata.Namespace != "argocd" {
		t.Errorf("namespace %q, want argocd", deployment.Metadata.Namespace)
	}
	names := make([]string, len(pod.Containers))
	for i, c := range pod.Containers {
		names[i] = c.Name
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"argocd-repo-server", "fleetpolicy-cmp"}) {
		t.Fatalf("containers %v, want the repo server's and the plugin sidecar fleetpolicy-cmp", names)
	}
	sidecar := pod.Containers[slices.IndexFunc(pod.Containers, func(c container) bool { return c.Name == "fleetpolicy-cmp" })]
	if !slices.Equal(sidecar.Command, []string{"/var/run/argocd/argocd-cmp-server"}) {
		t.Errorf("sidecar command %v, want argocd-cmp-server from the var-files volume", sidecar.Command)
	}
	if sidecar.Image != "ghcr.io/fleetpolicy/fleetpolicy-argocd-cmp:dev" {
		t.Errorf("sidecar image %q, want the image `make images` builds", sidecar.Image)
	}
	if sc := sidecar.SecurityContext; sc.RunAsUser == nil || *sc.RunAsUser != 999 || !sc.RunAsNonRoot {
		t.Errorf("sidecar securityContext %+v, want runAsNonRoot and runAsUser 999 as Argo CD requires", sc)
	}
	mounts := map[string]string{} // mountPath -> volume
	for _, m := range sidecar.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	if mounts["/var/run/argocd"] != "var-files" || mounts["/home/argocd/cmp-server/plugins"] != "plugins" {
		t.Errorf("sidecar mounts %v, want var-files at /var/run/argocd and plugins at /home/argocd/cmp-server/plugins", mounts)
	}
	tmp := mounts["/tmp"]
	for _, c := range slices.Concat(pod.Containers, pod.InitContainers) {
		for _, m := range c.VolumeMounts {
			if m.Name == tmp && c.Name != sidecar.Name {
				t.Errorf("the sidecar's /tmp volume %q is also mounted by %s; it must be the sidecar's own", tmp, c.Name)
			}
		}
	}
	for path, name := range mounts {
		i := slices.IndexFunc(pod.Volumes, func(v volume) bool { return v.Name == name })
		if i < 0 {
			t.Errorf("the sidecar mounts %s from volume %q, which the pod does not have", path, name)
		} else if path == "/tmp" && pod.Volumes[i].EmptyDir == nil {
			t.Errorf("the sidecar's /tmp volume %q is not an emptyDir", name)
		}
	}
}

type container struct {
	Name            string   `yaml:"name"`
	Image           string   `yaml:"image"`
	Command         []string `yaml:"command"`
	SecurityContext struct {
		RunAsNonRoot bool   `yaml:"runAsNonRoot"`
		RunAsUser    *int64 `yaml:"runAsUser"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type volume struct {
	Name     string    `yaml:"name"`
	EmptyDir *struct{} `yaml:"emptyDir"`
}
