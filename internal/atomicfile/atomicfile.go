// Package atomicfile replaces a file's content atomically: the data goes to a
// temporary file in the same directory, which is synced and renamed over the
// target, so that readers see the old content or the new, never a part.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// rename is os.Rename; tests replace it to make the last step fail.
var rename = os.Rename

// WriteFile writes data to path atomically. An existing file keeps its
// permission bits; a new one gets perm. A symbolic link is followed: the file
// it points to is replaced, the link stays. On failure the target is
// unchanged and the temporary file is removed.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("%s: cannot write: %v", path, err)
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, perm)
	}
	if err == nil {
		err = rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("%s: cannot write: %v", path, err)
	}
	return nil
}

// FailRenameForTest makes every later WriteFile fail at its rename step with
// err until the returned function is called. It exists for tests in other
// packages that must show a failed write leaves the original intact.
func FailRenameForTest(err error) (restore func()) {
	prev := rename
	rename = func(string, string) error { return err }
	return func() { rename = prev }
}
