package e2e

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The image tests build kiln's image with `make image` (podman, from
// scratch, local files only) into storage of their own and run it under a
// real container runtime. On this kind of machine podman runs containers
// only with runc, the cgroupfs manager and no default ulimits
// (../shared/container-facts.md): crun refuses hybrid cgroups, and the
// default ulimits are refused. The tests set that up in a containers.conf of
// their own, try each runtime installed and log the exact error of each one
// that cannot start the image.

// testImage is the image under test.
const testImage = "localhost/kiln:e2e"

// runtimes are the OCI runtimes tried, in order.
var runtimes = []string{"runc", "crun"}

// sbin are where Debian installs runc and crun (not always on PATH).
var sbin = []string{"/usr/sbin", "/sbin"}

// containers is podman configured for the tests, with the image built.
type containers struct {
	podman  string
	env     []string // CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, PATH with the docker shim first
	runtime string   // the OCI runtime that runs the image
	id      string   // image ID (the config's digest)
	digest  string   // manifest digest
	size    string
	shim    string // directory holding docker, which runs podman (kustomize calls docker)
}

var (
	containersOnce sync.Once
	theContainers  *containers
	containersErr  string
)

// requireImage returns podman with kiln's image built by make image; a tool
// missing fails the test in CI and skips it elsewhere.
func requireImage(t *testing.T) *containers {
	t.Helper()
	podman := requireTool(t, "podman")
	requireTool(t, "runc", sbin...)
	requireTool(t, "make")
	bb := requireTool(t, "busybox")
	if !isStaticELF(bb) {
		if inCI() {
			t.Fatalf("%s is not statically linked; install Debian's busybox-static (apt-get install busybox-static), which the image holds", bb)
		}
		t.Skipf("%s is not statically linked; install Debian's busybox-static (apt-get install busybox-static), which the image holds", bb)
	}
	containersOnce.Do(func() {
		theContainers, containersErr = setUpContainers(t, podman, bb)
	})
	if containersErr != "" {
		t.Fatal(containersErr)
	}
	return theContainers
}

// setUpContainers writes the configuration, builds the image and finds a
// runtime that runs it. It logs what it did, for the record.
func setUpContainers(t *testing.T, podman, busybox string) (*containers, string) {
	dir := filepath.Join(filepath.Dir(binDir), "containers")
	c := &containers{podman: podman, shim: filepath.Join(dir, "shim")}
	// The storage driver podman picks on this machine for its own storage
	// (overlay, else vfs), named, as podman wants it named.
	driver := "vfs"
	if out, err := exec.Command(podman, "info", "--format", "{{.Store.GraphDriverName}}").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		driver = strings.TrimSpace(string(out))
	}
	storage := fmt.Sprintf("[storage]\ndriver = %q\ngraphroot = %q\nrunroot = %q\n", driver, filepath.Join(dir, "storage"), filepath.Join(dir, "run"))
	if err := os.MkdirAll(c.shim, 0o755); err != nil {
		return nil, err.Error()
	}
	for name, content := range map[string]string{
		"storage.conf": storage,
		"shim/docker":  "#!/bin/sh\n# kustomize runs container functions with docker: run them with podman.\nexec " + podman + " \"$@\"\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			return nil, err.Error()
		}
	}
	conf := filepath.Join(dir, "containers.conf")
	writeConf := func(runtime string) error {
		s := "[containers]\n# The defaults (RLIMIT_NOFILE, RLIMIT_NPROC) are refused here.\ndefault_ulimits = []\n[engine]\ncgroup_manager = \"cgroupfs\"\n"
		if runtime != "" {
			s += fmt.Sprintf("runtime = %q\n", runtime)
		}
		return os.WriteFile(conf, []byte(s), 0o644)
	}
	if err := writeConf(""); err != nil {
		return nil, err.Error()
	}
	c.env = withPath(append(os.Environ(), "CONTAINERS_CONF="+conf, "CONTAINERS_STORAGE_CONF="+filepath.Join(dir, "storage.conf")), c.shim)

	// make image, as a user runs it, into the tests' storage.
	build := exec.Command("make", "image", "IMAGE="+testImage, "IMAGE_DIR="+filepath.Join(dir, "context"), "BUSYBOX="+busybox, "IMAGE_ARCH=amd64")
	build.Dir = repoRoot
	build.Env = c.env
	out, err := build.CombinedOutput()
	if err != nil {
		return nil, fmt.Sprintf("make image: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("make image IMAGE=%s: %s", testImage, lines[len(lines)-1])
	r := runIn(t, repoRoot, c.env, podman, "image", "inspect", "--format", "{{.Id}} {{.Digest}} {{.Size}}", testImage)
	if f := strings.Fields(r.stdout); r.code != 0 || len(f) != 3 {
		return nil, fmt.Sprintf("podman image inspect: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	} else {
		c.id, c.digest, c.size = f[0], f[1], f[2]
	}

	// The first runtime that runs the image wins; every failure is logged.
	var failures []string
	for _, rt := range runtimes {
		if _, err := lookTool(rt, sbin...); err != nil {
			t.Logf("runtime %s: not installed", rt)
			continue
		}
		r := runIn(t, repoRoot, c.env, podman, "--runtime", rt, "run", "--rm", "--network", "none", testImage, "version")
		if r.code != 0 {
			msg := fmt.Sprintf("runtime %s: podman run exits %d: %s", rt, r.code, strings.TrimSpace(r.stderr))
			t.Log(msg)
			failures = append(failures, msg)
			continue
		}
		t.Logf("runtime %s: runs the image (podman --runtime %s run %s version: %s)", rt, rt, testImage, strings.SplitN(r.stdout, "\n", 2)[0])
		c.runtime = rt
		break
	}
	if c.runtime == "" {
		return nil, "no container runtime runs the image:\n" + strings.Join(failures, "\n")
	}
	if err := writeConf(c.runtime); err != nil {
		return nil, err.Error()
	}
	t.Logf("image %s: id %s, digest %s, %s bytes; runtime %s (podman %s)", testImage, c.id, c.digest, c.size, c.runtime, podmanVersion(t, c))
	return c, ""
}

func podmanVersion(t *testing.T, c *containers) string {
	r := runIn(t, repoRoot, c.env, c.podman, "version", "--format", "{{.Client.Version}}")
	return strings.TrimSpace(r.stdout)
}

// run runs podman run --rm --network none ARGS (options, the image, then
// its arguments) and logs the command and its exit.
func (c *containers) run(t *testing.T, args ...string) result {
	t.Helper()
	all := append([]string{"run", "--rm", "--network", "none"}, args...)
	r := runIn(t, repoRoot, c.env, c.podman, all...)
	t.Logf("podman %s → exit %d", quoteArgs(all), r.code)
	return r
}

// quoteArgs shows a command line, quoting arguments with spaces.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t\n\"'") {
			a = fmt.Sprintf("%q", a)
		}
		if len(a) > 120 {
			a = a[:117] + "…"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// lookTool finds a program on PATH or in the extra directories.
func lookTool(name string, extraDirs ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range extraDirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

func isStaticELF(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}
