package outdir

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWriteThenCompare: after Write the directory compares equal; a file
// no longer produced is removed, a file kiln never wrote is kept, and a
// manifest entry outside the directory is ignored.
func TestWriteThenCompare(t *testing.T) {
	tests := []struct {
		name     string
		before   map[string]string // files in the directory before the build
		files    map[string][]byte // what the build produces
		wantDiff Diff              // Compare before Write
		gone     []string          // removed by Write
		kept     []string          // still there after Write
	}{
		{
			name:     "empty directory",
			files:    map[string][]byte{"a/deployment-x.yaml": []byte("x\n")},
			wantDiff: Diff{Missing: []string{"a/deployment-x.yaml"}, Manifest: true},
		},
		{
			name: "stale and no longer produced",
			before: map[string]string{
				"a/deployment-x.yaml": "old\n",
				"a/service-y.yaml":    "y\n",
				"notes.txt":           "mine\n",
				Manifest:              "a/deployment-x.yaml\na/service-y.yaml\n../outside.yaml\n",
			},
			files:    map[string][]byte{"a/deployment-x.yaml": []byte("x\n")},
			wantDiff: Diff{Stale: []string{"a/deployment-x.yaml"}, Extra: []string{"a/service-y.yaml"}, Manifest: true},
			gone:     []string{"a/service-y.yaml"},
			kept:     []string{"notes.txt"},
		},
		{
			name: "temporary file of a killed build",
			before: map[string]string{
				"a/.deployment-x.yaml.123.tmp": "half",
				"a/.other.yaml.1.tmp":          "not ours",
			},
			files:    map[string][]byte{"a/deployment-x.yaml": []byte("x\n")},
			wantDiff: Diff{Missing: []string{"a/deployment-x.yaml"}, Leftover: []string{"a/.deployment-x.yaml.123.tmp"}, Manifest: true},
			gone:     []string{"a/.deployment-x.yaml.123.tmp"},
			kept:     []string{"a/.other.yaml.1.tmp"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "out")
			writeFile(t, filepath.Join(root, "outside.yaml"), "keep\n")
			for rel, c := range tt.before {
				writeFile(t, filepath.Join(dir, rel), c)
			}
			d, err := Compare(dir, tt.files)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*d, tt.wantDiff) {
				t.Errorf("Compare before Write = %+v, want %+v", *d, tt.wantDiff)
			}
			if err := Write(dir, tt.files); err != nil {
				t.Fatal(err)
			}
			if d, err := Compare(dir, tt.files); err != nil || !d.Empty() {
				t.Errorf("Compare after Write = %+v, %v; want empty", d, err)
			}
			for _, rel := range tt.gone {
				if _, err := os.Stat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
					t.Errorf("%s still there", rel)
				}
			}
			for _, rel := range append(tt.kept, "../outside.yaml") {
				if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
					t.Errorf("%s was removed: %v", rel, err)
				}
			}
		})
	}
}
