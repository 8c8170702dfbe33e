package heapstart

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestThpMode reads the selected mode from the kernel's file.
func TestThpMode(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never\n": "madvise",
		"[always] madvise never\n": "always",
		"always madvise [never]":   "never",
		"":                         "",
		"always madvise never":     "",
		"] [":                      "",
	} {
		if got := thpMode([]byte(in)); got != want {
			t.Errorf("thpMode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestOnlyWhenAsked: huge pages are asked for in the madvise mode only.
func TestOnlyWhenAsked(t *testing.T) {
	old := thpModeFile
	t.Cleanup(func() { thpModeFile = old })
	dir := t.TempDir()
	for mode, want := range map[string]bool{
		"always [madvise] never": true,
		"[always] madvise never": false,
		"always madvise [never]": false,
		"":                       false, // no such file: a kernel without transparent huge pages
	} {
		thpModeFile = filepath.Join(dir, "absent")
		if mode != "" {
			thpModeFile = filepath.Join(dir, "enabled")
			if err := os.WriteFile(thpModeFile, []byte(mode+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := onlyWhenAsked(); got != want {
			t.Errorf("mode %q: asked = %v, want %v", mode, got, want)
		}
	}
}

// TestReserveHugePages: the marked range is 2 MiB-aligned inside the block,
// and the kernel records the advice on it (the "hg" flag in smaps); an
// advice that fails marks nothing.
func TestReserveHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage"); err != nil {
		t.Skip("a kernel without transparent huge pages refuses the advice:", err)
	}
	start, end := reserveHugePages(16<<20, adviseHuge)
	if start == 0 || end <= start || start%hugePageBytes != 0 || end%hugePageBytes != 0 || end-start < 14<<20 {
		t.Fatalf("marked [%#x, %#x), want a 2 MiB-aligned range of at least 14 MiB", start, end)
	}
	flags := vmFlags(t, start, end)
	if len(flags) == 0 {
		t.Fatalf("no mapping covers [%#x, %#x)", start, end)
	}
	for _, f := range flags {
		if !strings.Contains(" "+f+" ", " hg ") {
			t.Errorf("a mapping in [%#x, %#x) is not advised for huge pages: VmFlags %s", start, end, f)
		}
	}
	if s, e := reserveHugePages(16<<20, func(uintptr, uintptr) error { return errors.New("refused") }); s != 0 || e != 0 {
		t.Errorf("refused advice: marked [%#x, %#x), want nothing", s, e)
	}
}

// vmFlags returns the VmFlags of the mappings that overlap [start, end).
func vmFlags(t *testing.T, start, end uintptr) []string {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	var flags []string
	overlaps := false
	for _, line := range strings.Split(string(data), "\n") {
		if r, _, ok := strings.Cut(line, " "); ok && strings.Count(r, "-") == 1 && !strings.HasSuffix(r, ":") {
			lo, hi, _ := strings.Cut(r, "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				overlaps = uintptr(l) < end && start < uintptr(h)
				continue
			}
		}
		if f, ok := strings.CutPrefix(line, "VmFlags:"); ok && overlaps {
			flags = append(flags, strings.TrimSpace(f))
		}
	}
	return flags
}
