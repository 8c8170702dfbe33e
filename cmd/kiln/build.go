package main

import (
	"bytes"
	"fmt"
	"github.com/kilnhq/kiln/internal/atomicfile"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/report"
	"github.com/kilnhq/kiln/rules"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newBuildCmd) }

// buildManifest is the file in an output directory that lists the files kiln
// wrote there, so that a later build removes only its own stale files.
const buildManifest = ".kiln-build"

func newBuildCmd(e *env) *cobra.Command {
	var lf lintFlags
	var outDir string
	var check, noLint bool
	var failOn string
	cmd := &cobra.Command{
		Use:   "build [PATH...] [-o DIR]",
		Short: "Compile App specs into Kubernetes manifests, lint them, print or write them",
		Long: `Compile the App specs (apiVersion kiln.dev/v1alpha1, kind App) among PATH
(default: the current directory) into Kubernetes objects, lint the result, and
print it as one YAML stream, or with -o write one file per object to
DIR/<namespace>/<kind>-<name>.yaml. Writes are atomic; files a previous build
wrote that are no longer produced are removed (kiln lists what it wrote in
DIR/` + buildManifest + `; other files are never touched). Other manifests among
the inputs are linted with the compiled objects as context but not emitted.

With --check nothing is written: exit 1 and a summary if DIR is out of date
(stale, missing or extra files, or temporary files a killed build left, which
the next build removes).
Warnings (the compiler's, and lint findings on the compiled objects) are
printed on stderr. Findings at the --fail-on level (default error) stop the
build: exit 1, nothing printed or written. --no-lint skips the lint.
A file of apiVersion kiln.dev/* or kind App that is not a valid spec stops the
build (exit 2) and nothing in DIR changes: a typo in a spec's header never
removes the app's files.

Exit codes: 0 ok, 1 findings at --fail-on or stale output (--check), 2 usage error or bad spec.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if check && outDir == "" {
				return usageErrorf("--check needs -o DIR: the directory to compare with")
			}
			threshold, err := parseFailOn(failOn)
			if err != nil {
				return err
			}
			cfg, opts, err := lf.load()
			if err != nil {
				return err
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			set := readBuildInputs(e, args, cfg, outDir)
			if errs := set.Errors(); len(errs) > 0 {
				printInputErrors(e, errs)
				return &exitError{code: exitInput}
			}
			if errs := notSpecs(set.Objects()); len(errs) > 0 {
				printInputErrors(e, errs)
				return &exitError{code: exitInput}
			}
			all, compiled, warns, errs := buildObjects(set.Objects(), opts)
			if len(errs) > 0 {
				printInputErrors(e, errs)
				return &exitError{code: exitInput}
			}
			for _, w := range warns {
				fmt.Fprintln(e.stderr, warningLine(w))
			}
			refuse := len(warns) > 0 && threshold != 0 && threshold <= rules.Warning
			if len(compiled) == 0 {
				return usageErrorf("no App specs (apiVersion %s, kind %s) among the inputs", compiler.APIVersion, compiler.Kind)
			}
			files, err := outputFiles(compiled)
			if err != nil {
				return &exitError{code: exitInput, msg: err.Error()}
			}
			if !noLint {
				res, err := lintObjects(all, fileObjects(set), cfg, opts)
				if err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
				own := onlyObjects(res, compiled)
				if len(own.Findings) > own.Summary.Suppressed {
					if err := report.Write(e.stderr, "text", own, report.Options{ToolVersion: version}); err != nil {
						return err
					}
				}
				refuse = refuse || failsAt(own, threshold)
			}
			if refuse {
				return &exitError{code: exitFindings, msg: fmt.Sprintf("build refused: findings at --fail-on %s (fix the spec, or use --fail-on / --no-lint)", failOnName(threshold))}
			}
			switch {
			case check:
				d, err := diffOutput(outDir, files)
				if err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
				if !d.empty() {
					d.print(e, outDir)
					return &exitError{code: exitFindings}
				}
				return nil
			case outDir != "":
				if err := writeOutput(outDir, files); err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
				return nil
			}
			return manifest.Write(e.stdout, compiled)
		},
	}
	lf.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&outDir, "output", "o", "", "write one file per object under DIR instead of printing the stream")
	fl.BoolVar(&check, "check", false, "write nothing; exit 1 if the files under -o DIR are not what the build would write")
	fl.BoolVar(&noLint, "no-lint", false, "do not lint the compiled objects")
	fl.StringVar(&failOn, "fail-on", "error", "lowest severity that stops the build (exit 1, nothing written): "+failOnValues)
	return cmd
}

// readBuildInputs reads the inputs, leaving out the output directory so a
// previous build's files are not read back as inputs.
func readBuildInputs(e *env, paths []string, cfg *rules.Config, outDir string) *manifest.Set {
	files, errs := manifest.Expand(paths)
	kept := files[:0]
	absOut := ""
	if outDir != "" {
		absOut, _ = filepath.Abs(outDir)
	}
	for _, f := range files {
		if f != manifest.Stdin && (cfg.Excluded(f) || within(absOut, f)) {
			continue
		}
		kept = append(kept, f)
	}
	set := manifest.ReadFiles(kept, e.stdin)
	set.Errs = append(errs, set.Errs...)
	dropConfigFiles(set)
	return set
}

// dropConfigFiles removes from the inputs the files that specs read into
// ConfigMaps (an Envoy or Fluent Bit config next to the spec is data for a
// ConfigMap, not a manifest to compile or lint).
func dropConfigFiles(set *manifest.Set) {
	used := map[string]bool{}
	for _, o := range set.Objects() {
		if compiler.IsSpec(o) {
			for _, f := range compiler.ConfigFiles(o) {
				if abs, err := filepath.Abs(f); err == nil {
					used[abs] = true
				}
			}
		}
	}
	if len(used) == 0 {
		return
	}
	kept := set.Sources[:0]
	for _, src := range set.Sources {
		if abs, err := filepath.Abs(src.Path); err == nil && used[abs] {
			continue
		}
		kept = append(kept, src)
	}
	set.Sources = kept
}

func within(dir, file string) bool {
	if dir == "" {
		return false
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// notSpecs refuses objects of kind App that are not in kiln's group: in a
// build, a spec whose header is wrong must stop the build rather than drop
// the app's files from the output directory.
func notSpecs(objs []*manifest.Object) []error {
	var errs []error
	for _, o := range objs {
		if compiler.MaybeSpec(o) && !compiler.IsSpec(o) {
			errs = append(errs, &manifest.Error{Pos: o.Locate("apiVersion"), Msg: fmt.Sprintf("kind App with apiVersion %q is not a kiln App spec (apiVersion %s); kiln build refuses it so that a typo never removes the app's output: fix the apiVersion, or exclude the file in .kiln.yaml if it is another API's App", o.APIVersion, compiler.APIVersion)})
		}
	}
	return errs
}

// kindRank orders compiled objects across specs as DESIGN §3 does within one.
var kindRank = map[string]int{"Namespace": 0, "PersistentVolumeClaim": 1, "ConfigMap": 2, "Service": 3, "Deployment": 4, "JobSet": 5}

// buildObjects compiles the specs among objs. It returns every object (the
// compiled ones in place of their specs, for linting) and the compiled ones
// alone, ordered by kind across specs, then in spec order.
func buildObjects(objs []*manifest.Object, _ *rules.Options) (all, compiled []*manifest.Object, warns, errs []error) {
	all, compiled, warns, errs = expandSpecsWarn(objs)
	sort.SliceStable(compiled, func(i, j int) bool { return kindRank[compiled[i].Kind] < kindRank[compiled[j].Kind] })
	seen := map[manifest.Ref]*manifest.Object{}
	for _, o := range compiled {
		if prev, dup := seen[o.Ref()]; dup {
			errs = append(errs, &manifest.Error{Pos: o.Pos(), Msg: fmt.Sprintf("%s is also produced by %s; two specs compile to the same object: rename one", o.Ref(), prev.Pos())})
			continue
		}
		seen[o.Ref()] = o
	}
	return all, compiled, warns, errs
}

// expandSpecsWarn is expandSpecs that also returns the compiler's warnings.
func expandSpecsWarn(objs []*manifest.Object) (all, compiled []*manifest.Object, warns, errs []error) {
	var specs []*manifest.Object
	for _, o := range objs {
		if compiler.IsSpec(o) {
			specs = append(specs, o)
		}
	}
	if len(specs) == 0 {
		return objs, nil, nil, nil
	}
	results, warns, cerrs := compiler.CompileAllWarn(specs)
	for _, err := range cerrs {
		errs = append(errs, unjoin(err)...)
	}
	next := 0
	for _, o := range objs {
		if !compiler.IsSpec(o) {
			all = append(all, o)
			continue
		}
		all = append(all, results[next]...)
		compiled = append(compiled, results[next]...)
		next++
	}
	return all, compiled, warns, errs
}

// warningLine formats a compiler warning as file:line:col: warning: message.
func warningLine(err error) string {
	if me, ok := err.(*manifest.Error); ok {
		return fmt.Sprintf("%s: warning: %s", me.Pos, me.Msg)
	}
	return "warning: " + err.Error()
}

func failOnName(s rules.Severity) string {
	if s == rules.Warning {
		return "warning"
	}
	return "error"
}

// onlyObjects keeps the findings on the given objects and recounts the summary.
func onlyObjects(res *rules.Result, objs []*manifest.Object) *rules.Result {
	type key struct {
		file string
		ref  manifest.Ref
	}
	keep := map[key]bool{}
	for _, o := range objs {
		keep[key{o.File, o.Ref()}] = true
	}
	out := *res
	out.Findings = nil
	out.Summary.Errors, out.Summary.Warnings, out.Summary.Infos, out.Summary.Suppressed = 0, 0, 0, 0
	for _, f := range res.Findings {
		if !keep[key{f.Pos.File, f.Object}] {
			continue
		}
		out.Findings = append(out.Findings, f)
		switch {
		case f.Suppressed != nil:
			out.Summary.Suppressed++
		case f.Severity == rules.Error:
			out.Summary.Errors++
		case f.Severity == rules.Warning:
			out.Summary.Warnings++
		default:
			out.Summary.Infos++
		}
	}
	return &out
}

// outputFiles encodes each object for its file under the output directory:
// <namespace>/<kind>-<name>.yaml; a Namespace goes with its namespace's
// objects, other cluster-scoped objects at the top.
func outputFiles(objs []*manifest.Object) (map[string][]byte, error) {
	files := make(map[string][]byte, len(objs))
	for _, o := range objs {
		name := strings.ToLower(o.Kind) + "-" + o.Name + ".yaml"
		dir := o.Namespace
		if o.Kind == "Namespace" {
			dir = o.Name
		}
		rel := name
		if dir != "" {
			rel = dir + "/" + name
		}
		b, err := manifest.Encode(o.Node())
		if err != nil {
			return nil, fmt.Errorf("%s: cannot encode %s: %v", o.Pos(), o.Ref(), err)
		}
		files[rel] = b
	}
	return files, nil
}

// outputDiff is how an output directory differs from what a build would write.
type outputDiff struct {
	stale, missing, extra []string
	leftover              []string // temporary files of a killed build
	manifest              bool     // the build manifest itself is out of date
}

func (d *outputDiff) empty() bool {
	return len(d.stale)+len(d.missing)+len(d.extra)+len(d.leftover) == 0 && !d.manifest
}

func (d *outputDiff) print(e *env, dir string) {
	fmt.Fprintf(e.stderr, "kiln: %s is out of date: %d stale, %d missing, %d extra, %d leftover\n", dir, len(d.stale), len(d.missing), len(d.extra), len(d.leftover))
	for _, g := range []struct {
		what  string
		files []string
	}{{"stale", d.stale}, {"missing", d.missing}, {"extra", d.extra}, {"leftover", d.leftover}} {
		for _, f := range g.files {
			fmt.Fprintf(e.stderr, "  %-8s %s\n", g.what, filepath.Join(dir, filepath.FromSlash(f)))
		}
	}
	if d.manifest {
		fmt.Fprintf(e.stderr, "  %-8s %s\n", "stale", filepath.Join(dir, buildManifest))
	}
	fmt.Fprintln(e.stderr, "run kiln build with the same inputs and -o to update it")
}

// diffOutput compares the output directory with the files a build would write.
func diffOutput(dir string, files map[string][]byte) (*outputDiff, error) {
	d := &outputDiff{}
	for _, rel := range sortedFiles(files) {
		have, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		switch {
		case os.IsNotExist(err):
			d.missing = append(d.missing, rel)
		case err != nil:
			return nil, fmt.Errorf("%s: cannot read: %v", filepath.Join(dir, rel), err)
		case !bytes.Equal(have, files[rel]):
			d.stale = append(d.stale, rel)
		}
	}
	for _, rel := range previousFiles(dir) {
		if _, want := files[rel]; want {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			d.extra = append(d.extra, rel)
		}
	}
	d.leftover = leftoverTemps(dir, files)
	have, _ := os.ReadFile(filepath.Join(dir, buildManifest))
	d.manifest = !bytes.Equal(have, manifestContent(files))
	return d, nil
}

// tempName matches the temporary files atomicfile.WriteFile creates next to
// a target (.<name>.<random digits>.tmp).
var tempName = regexp.MustCompile(`^\.(.+)\.[0-9]+\.tmp$`)

// leftoverTemps lists, relative to dir, the temporary files a killed build
// left next to files kiln writes there (the build manifest, or a .yaml file
// this build or the previous one produces). Nothing else is ever listed.
func leftoverTemps(dir string, files map[string][]byte) []string {
	ours := map[string]bool{buildManifest: true}
	subdirs := map[string]bool{"": true}
	for _, rel := range append(sortedFiles(files), previousFiles(dir)...) {
		ours[rel] = true
		subdirs[pathDir(rel)] = true
	}
	var out []string
	for _, sub := range sortedKeys(subdirs) {
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(sub)))
		if err != nil {
			continue
		}
		for _, en := range entries {
			m := tempName.FindStringSubmatch(en.Name())
			if m == nil || !en.Type().IsRegular() {
				continue
			}
			target := m[1]
			if sub != "" {
				target = sub + "/" + target
			}
			if ours[target] {
				rel := en.Name()
				if sub != "" {
					rel = sub + "/" + rel
				}
				out = append(out, rel)
			}
		}
	}
	return out
}

func pathDir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeOutput writes every file atomically (a temporary file in the same
// directory, then a rename), skips files already up to date, removes files a
// previous build wrote that are no longer produced, and records what it wrote.
func writeOutput(dir string, files map[string][]byte) error {
	for _, rel := range leftoverTemps(dir, files) {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("%s: cannot remove a temporary file a killed build left: %v", path, err)
		}
	}
	old := previousFiles(dir)
	for _, rel := range sortedFiles(files) {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, files[rel]) {
			continue
		}
		if err := writeAtomic(path, files[rel]); err != nil {
			return err
		}
	}
	for _, rel := range old {
		if _, want := files[rel]; want {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("%s: cannot remove stale file: %v", path, err)
			}
			// Remove the namespace directory if that emptied it.
			if sub := filepath.Dir(path); sub != filepath.Clean(dir) {
				_ = os.Remove(sub) // fails, harmlessly, unless empty
			}
		}
	}
	return writeAtomic(filepath.Join(dir, buildManifest), manifestContent(files))
}

// writeAtomic creates path's directory and writes data to it atomically.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%s: cannot create directory: %v", filepath.Dir(path), err)
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// manifestContent is the build manifest listing the files, one per line.
func manifestContent(files map[string][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("# Files written by kiln build; kiln removes them when they are no longer produced.\n")
	for _, rel := range sortedFiles(files) {
		b.WriteString(rel + "\n")
	}
	return b.Bytes()
}

// previousFiles reads the build manifest, keeping only entries that are
// plain relative paths inside the directory (never anything outside it).
func previousFiles(dir string) []string {
	data, err := os.ReadFile(filepath.Join(dir, buildManifest))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || !safeRel(line) {
			continue
		}
		out = append(out, line)
	}
	return out
}

func safeRel(rel string) bool {
	if strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || !strings.HasSuffix(rel, ".yaml") {
		return false
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}

func sortedFiles(files map[string][]byte) []string {
	out := make([]string, 0, len(files))
	for k := range files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
