// Command imageroot assembles the build context of kiln's container image
// (make image-root): the root file system of one architecture under
// DIR/linux_<arch>, and DIR/home, which the Dockerfile copies owned by the
// argocd user. Only local files go in: the static kiln already built at
// DIR/linux_<arch>/usr/local/bin/kiln, Debian's static busybox linked as the
// few applets the Argo CD plugin's discover command and a person looking
// inside need, the users, and the plugin's configuration.
//
//	go run ./tools/imageroot -arch amd64 -busybox /bin/busybox DIR
package main

import (
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Applets are the busybox programs the image links: sh, find, grep, xargs
// and head are what examples/argocd/plugin.yaml's discover command runs
// (e2e runs it in the image); cat and ls are for a person looking inside.
var Applets = []string{"sh", "find", "grep", "xargs", "head", "cat", "ls"}

// Users: root, argocd (999, the uid Argo CD runs plugin sidecars as, and
// the image's USER) and nobody (kustomize runs container functions with
// docker run --user nobody).
const (
	passwd = "root:x:0:0:root:/root:/bin/sh\nargocd:x:999:999:argocd:/home/argocd:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n"
	group  = "root:x:0:\nargocd:x:999:\nnogroup:x:65534:\n"
)

// machines maps a Go architecture to its ELF machine.
var machines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

func main() {
	arch := flag.String("arch", "amd64", "the image's architecture (Go's name: amd64, arm64)")
	busybox := flag.String("busybox", "/bin/busybox", "a statically linked busybox of that architecture (Debian: busybox-static)")
	plugin := flag.String("plugin", "examples/argocd/plugin.yaml", "the Argo CD plugin configuration baked into the image")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: imageroot [-arch A] [-busybox PATH] [-plugin FILE] DIR")
		os.Exit(2)
	}
	if err := assemble(flag.Arg(0), *arch, *busybox, *plugin); err != nil {
		fmt.Fprintln(os.Stderr, "imageroot:", err)
		os.Exit(1)
	}
}

// assemble writes the build context under dir.
func assemble(dir, arch, busybox, plugin string) error {
	root := filepath.Join(dir, "linux_"+arch)
	kiln := filepath.Join(root, "usr/local/bin/kiln")
	for _, bin := range []string{kiln, busybox} {
		if err := checkStatic(bin, arch); err != nil {
			return err
		}
	}
	for _, d := range []string{"bin", "etc", "home", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	// /tmp as in any Linux system: writable by all, sticky.
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o777|os.ModeSticky); err != nil {
		return err
	}
	if err := copyFile(busybox, filepath.Join(root, "bin/busybox"), 0o755); err != nil {
		return err
	}
	for _, a := range Applets {
		link := filepath.Join(root, "bin", a)
		if err := os.Remove(link); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if err := os.Symlink("busybox", link); err != nil {
			return err
		}
	}
	for name, content := range map[string]string{"etc/passwd": passwd, "etc/group": group} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	// The CMP server reads the plugin here; repo-server-patch.yaml may mount
	// the ConfigMap over it.
	config := filepath.Join(dir, "home/argocd/cmp-server/config")
	if err := os.MkdirAll(config, 0o755); err != nil {
		return err
	}
	return copyFile(plugin, filepath.Join(config, "plugin.yaml"), 0o644)
}

// checkStatic fails unless path is a statically linked ELF executable for
// arch: the image has no libc and no loader.
func checkStatic(path, arch string) error {
	want, ok := machines[arch]
	if !ok {
		return fmt.Errorf("architecture %q: want amd64 or arm64", arch)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w (want a statically linked %s executable)", path, err, arch)
	}
	defer f.Close()
	if f.Machine != want {
		return fmt.Errorf("%s is built for %s, not %s", path, f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (it names a loader); the image has no libc: use a static build (Debian: apt-get install busybox-static)", path)
		}
	}
	return nil
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		return err
	}
	return os.Chmod(to, mode)
}
