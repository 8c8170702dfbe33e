package e2e

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var (
	staticOnce sync.Once
	staticBin  string
	staticErr  string
)

// staticKiln builds linux/amd64 kiln with `make build` (the Makefile's
// flags: CGO_ENABLED=0, -trimpath, stripped, version from git) once.
func staticKiln(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("runs the linux/amd64 binary; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	requireTool(t, "make")
	staticOnce.Do(func() {
		out := filepath.Join(filepath.Dir(binDir), "static", "kiln")
		cmd := exec.Command("make", "build", "BIN="+out)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
		if b, err := cmd.CombinedOutput(); err != nil {
			staticErr = "make build: " + err.Error() + "\n" + string(b)
			return
		}
		staticBin = out
	})
	if staticErr != "" {
		t.Fatal(staticErr)
	}
	return staticBin
}

// TestReleaseBinaryIsStatic checks what make build (and make release, with
// the same flags) produces: an ELF with no interpreter and no shared
// libraries, no symbol table, built without cgo and with -trimpath.
func TestReleaseBinaryIsStatic(t *testing.T) {
	bin := staticKiln(t)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		t.Errorf("machine %v class %v, want x86-64 ELF64", f.Machine, f.Class)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary names a dynamic loader (PT_INTERP): it needs libc")
		}
		if p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a dynamic section")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	if f.Section(".symtab") != nil {
		t.Errorf("the binary is not stripped (has .symtab)")
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": "linux", "GOARCH": "amd64"} {
		if settings[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], want)
		}
	}
	// (Go does not record -ldflags with -trimpath; stripping shows as no
	// .symtab above, the commit in TestReleaseBinaryCleanEnvironment.)
	if b, err := exec.Command("file", bin).Output(); err == nil {
		t.Logf("file: %s", bytes.TrimSpace(b))
	}
	fi, _ := os.Stat(bin)
	t.Logf("size: %d bytes (%.1f MB)", fi.Size(), float64(fi.Size())/(1<<20))
}

// TestReleaseBinaryCleanEnvironment runs the static binary where there is
// nothing else: a root directory holding only kiln and the examples (no
// libc, no Go, no shell), entered with chroot as root, with an empty
// environment (no PATH, no HOME). Each example must build to exactly its
// checked-in output and lint clean; a bad manifest must fail.
func TestReleaseBinaryCleanEnvironment(t *testing.T) {
	bin := staticKiln(t)
	root := t.TempDir()
	copyFile(t, bin, filepath.Join(root, "kiln"), 0o755)
	if err := os.CopyFS(filepath.Join(root, "examples"), os.DirFS(filepath.Join(repoRoot, "examples"))); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"bad/rogue.yaml": badDeployment})
	runner := cleanRunner(t, root)
	run := func(dir, name string, args ...string) result { return runner(nil, dir, name, args...) }

	r := run("/", "/kiln", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "kiln ") || !strings.Contains(r.stdout, "linux/amd64") {
		t.Fatalf("kiln version: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	commit, err := exec.Command("git", "-C", repoRoot, "rev-parse", "--short=12", "HEAD").Output()
	if err == nil && !strings.Contains(r.stdout, "commit "+strings.TrimSpace(string(commit))) {
		t.Errorf("kiln version does not name the commit %s:\n%s", bytes.TrimSpace(commit), r.stdout)
	}
	t.Logf("kiln version:\n%s", r.stdout)

	specs, _ := filepath.Glob(filepath.Join(root, "examples", "*", "app.yaml"))
	built := 0
	for _, spec := range specs {
		dir := filepath.Dir(spec)
		if _, err := os.Stat(filepath.Join(dir, "out")); err != nil {
			continue
		}
		rel, _ := filepath.Rel(root, dir)
		if r := run("/", "/kiln", "build", rel+"/app.yaml", "-o", rel+"/out", "--check"); r.code != 0 {
			t.Errorf("kiln build --check %s: exit %d (the output differs from the checked-in one?)\n%s%s", rel, r.code, r.stdout, r.stderr)
		}
		if r := run("/", "/kiln", "lint", rel+"/out"); r.code != 0 {
			t.Errorf("kiln lint %s/out: exit %d\n%s%s", rel, r.code, r.stdout, r.stderr)
		}
		built++
	}
	if built < 3 {
		t.Fatalf("only %d examples with checked-in output found under %s", built, filepath.Join(root, "examples"))
	}
	r = run("/bad", "/kiln", "lint", "-f", "json", ".")
	if r.code != 1 || !strings.Contains(r.stdout, `"psa/privileged"`) {
		t.Errorf("kiln lint of a privileged Deployment: exit %d, want 1 with psa/privileged\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// cleanRunner returns a function that runs a command inside root with
// exactly env (nil: an empty environment): chrooted, as uid 999, when the
// test runs as root; else from the host's view of root (absolute names and
// PATH entries are taken inside root) with the same environment.
func cleanRunner(t *testing.T, root string) func(env []string, dir, name string, args ...string) result {
	t.Helper()
	chroot := os.Geteuid() == 0
	if chroot {
		// Readable by uid 999, as an image's files are.
		if err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return os.Chmod(p, 0o755|(fileMode(p)&os.ModeSticky))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		t.Logf("commands run chrooted into %s as uid 999 with only the environment given", root)
	} else {
		t.Logf("not root: running from %s with a clean environment, without chroot", root)
	}
	return func(env []string, dir, name string, args ...string) result {
		t.Helper()
		if env == nil {
			env = []string{}
		}
		path := name
		if !strings.Contains(name, "/") {
			path = lookPathInRoot(root, env, name)
		}
		cmd := exec.Command(path, args...)
		cmd.Args[0] = name
		cmd.Env = env
		if chroot {
			cmd.Dir = dir
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: 999, Gid: 999}}
		} else {
			cmd.Path = filepath.Join(root, path)
			cmd.Dir = filepath.Join(root, dir)
			// PATH inside root, seen from the host.
			for i, kv := range env {
				if p, ok := strings.CutPrefix(kv, "PATH="); ok {
					var dirs []string
					for _, d := range filepath.SplitList(p) {
						dirs = append(dirs, filepath.Join(root, d))
					}
					env[i] = "PATH=" + strings.Join(dirs, string(os.PathListSeparator))
				}
			}
			cmd.Env = env
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errb.String()}
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
			}
			r.code = ee.ExitCode()
		}
		return r
	}
}

// lookPathInRoot finds name on env's PATH inside root; the result is the
// path inside root ("/bin/sh").
func lookPathInRoot(root string, env []string, name string) string {
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(p) {
				if st, err := os.Stat(filepath.Join(root, d, name)); err == nil && !st.IsDir() {
					return filepath.Join(d, name)
				}
			}
		}
	}
	return "/" + name + "-not-on-PATH"
}

func fileMode(p string) os.FileMode {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Mode()
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}
