package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/kilnhq/kiln/internal/golden"
	"github.com/kilnhq/kiln/lint"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
	"github.com/kilnhq/kiln/rules/internal/ruletest"
	"github.com/kilnhq/kiln/rules/policies"
)

// checker runs the storage rules: the Go ones and storage/inline-nfs, a
// policy in rules/policies.
var checker = ruletest.Combine("storage", Checker, policies.NewChecker("storage-policies", func(id string) bool { return strings.HasPrefix(id, "storage/") }))

func TestFixtures(t *testing.T) { ruletest.CheckFixtures(t, checker, "classes") }

func TestRuleDocs(t *testing.T) { ruletest.CheckRules(t, checker) }

// TestStorageClassesFile: classes from --storage-classes override the table,
// and the default class they mark judges claims without storageClassName.
func TestStorageClassesFile(t *testing.T) {
	data, err := os.ReadFile("testdata/classes/claims.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts := rules.DefaultOptions()
	opts.StorageClasses = "testdata/classes/cluster.yaml"
	res := ruletest.Run(t, "testdata/classes/claims.yaml", data, opts, Checker)
	var got []string
	for _, f := range res.Findings {
		got = append(got, fmt.Sprintf("%d %s %s", f.Pos.Line, f.Rule, f.Field))
	}
	want := []string{
		"13 storage/rwx-no-class spec.accessModes[0]",
		"13 storage/rwx-unsupported spec.accessModes[0]", // defaulted → default class "block" (EBS)
		"21 storage/rwx-unsupported spec.accessModes[0]", // block; "shared" on standard is EFS here
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n got %q\nwant %q", got, want)
	}
	for _, f := range res.Findings {
		if f.Rule == RWXNoClass && !strings.Contains(f.Message, `"block"`) {
			t.Errorf("rwx-no-class message does not name the known default class: %s", f.Message)
		}
	}
}

func TestStorageClassesFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "missing.yaml"), "missing.yaml: cannot read"},
		{bad, "bad.yaml:"},
	} {
		opts := rules.DefaultOptions()
		opts.StorageClasses = tc.file
		eng := &rules.Engine{Checkers: []*rules.Checker{Checker}, Options: opts, Given: lint.NewGiven(opts).Objects}
		_, err := eng.Run(nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.file, err, tc.want)
		}
		var merr *manifest.Error
		if err != nil && !errors.As(err, &merr) {
			t.Errorf("%s: error %v is not a positioned manifest.Error", tc.file, err)
		}
	}
}

func TestTable(t *testing.T) {
	for _, tc := range []struct {
		class, provisioner string
		rwx                bool
	}{
		{"gp2", "kubernetes.io/aws-ebs", false}, {"gp3", "ebs.csi.aws.com", false},
		{"standard", "kubernetes.io/gce-pd", false}, {"standard-rwo", "pd.csi.storage.gke.io", false},
		{"premium-rwo", "pd.csi.storage.gke.io", false}, {"managed-csi", "disk.csi.azure.com", false},
		{"managed-premium", "disk.csi.azure.com", false}, {"default", "disk.csi.azure.com", false},
		{"local-path", "rancher.io/local-path", false}, {"efs-sc", "efs.csi.aws.com", true},
		{"azurefile", "file.csi.azure.com", true}, {"azurefile-csi", "file.csi.azure.com", true},
		{"filestore", "filestore.csi.storage.gke.io", true}, {"nfs-client", "cluster.local/nfs-subdir-external-provisioner", true},
		{"longhorn", "driver.longhorn.io", true}, {"cephfs", "cephfs.csi.ceph.com", true},
	} {
		c := known().lookupClass(tc.class)
		if c == nil || c.Provisioner != tc.provisioner {
			t.Errorf("class %s: got %+v, want provisioner %s", tc.class, c, tc.provisioner)
			continue
		}
		if p := known().lookupProvisioner(c.Provisioner); p == nil || p.RWX != tc.rwx {
			t.Errorf("provisioner %s: got %+v, want rwx=%v", c.Provisioner, p, tc.rwx)
		}
	}
	if p := known().lookupProvisioner("rook-ceph.cephfs.csi.ceph.com"); p == nil || !p.RWX {
		t.Errorf("namespaced Rook provisioner not matched: %+v", p)
	}
	if p := known().lookupProvisioner("xebs.csi.aws.com"); p != nil {
		t.Errorf("suffix without a dot boundary matched %+v", p)
	}
}

func TestLoadTableErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not yaml", "provisioners: [", "yaml"},
		{"no what", "provisioners: [{name: a.b}]", "required"},
		{"duplicate", "provisioners: [{name: a, what: x}, {name: a, what: y}]", "once per name"},
		{"unknown provisioner", "provisioners: [{name: a, what: x}]\nclasses: [{name: c, provisioner: b}]", "listed under provisioners"},
	} {
		if _, err := loadTable([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func FuzzLoadTable(f *testing.F) {
	f.Add(provisionersYAML)
	f.Add([]byte("provisioners: [{name: a, what: x}]\nclasses: [{name: c, provisioner: a}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := loadTable(data)
		if err != nil {
			return
		}
		for _, c := range tb.Classes {
			if tb.lookupProvisioner(c.Provisioner) == nil {
				t.Fatalf("class %s: provisioner %s accepted but not found", c.Name, c.Provisioner)
			}
		}
	})
}

// TestRWOSharedUnits: claims and their users are related within one
// namespace and one rendered unit only (a directory by default, or the Unit
// a renderer sets), and each message names every other user once.
func TestRWOSharedUnits(t *testing.T) {
	pvc := "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: ns}\nspec: {accessModes: [ReadWriteOnce]}\n"
	pod := func(name string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: ns}\nspec:\n  containers: [{name: c, image: x}]\n" +
			"  volumes: [{name: a, persistentVolumeClaim: {claimName: data}}, {name: b, persistentVolumeClaim: {claimName: data}}]\n"
	}
	parse := func(file, unit, data string) []*manifest.Object {
		objs, errs := manifest.Parse(file, []byte(data))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		for _, o := range objs {
			o.Unit = unit
		}
		return objs
	}
	cat := func(sets ...[]*manifest.Object) []*manifest.Object {
		var out []*manifest.Object
		for _, s := range sets {
			out = append(out, s...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		objs []*manifest.Object
		want int
	}{
		{"one directory", cat(parse("app/pvc.yaml", "", pvc), parse("app/a.yaml", "", pod("a")), parse("app/b.yaml", "", pod("b"))), 2},
		{"claim in another directory", cat(parse("one/pvc.yaml", "", pvc), parse("two/a.yaml", "", pod("a")), parse("two/b.yaml", "", pod("b"))), 0},
		{"two projects in one directory, separate units", cat(parse("out/pvc.yaml", "chart:x", pvc), parse("out/a.yaml", "chart:x", pod("a")), parse("out/b.yaml", "chart:y", pod("b"))), 0},
		{"a copy of the user is one user", cat(parse("app/pvc.yaml", "", pvc), parse("app/a.yaml", "", pod("a")), parse("app/a-copy.yaml", "", pod("a"))), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := (&rules.Engine{Checkers: []*rules.Checker{Checker}}).Run(tc.objs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Findings) != tc.want {
				t.Fatalf("got %d findings, want %d: %+v", len(res.Findings), tc.want, res.Findings)
			}
			for _, f := range res.Findings {
				other := `Pod "b"`
				if f.Object.Name == "b" {
					other = `Pod "a"`
				}
				if strings.Count(f.Message, other) != 1 || strings.Count(f.Message, `Pod "`+f.Object.Name+`"`) != 1 {
					t.Errorf("message should name each user once: %s", f.Message)
				}
			}
		})
	}
}
