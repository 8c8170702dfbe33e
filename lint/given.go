package lint

import (
	"sync"

	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

// Given is the context a user names beside the input: the --policy files
// and directories (rules.Policies) and the --storage-classes file
// (rules.StorageClasses). Each file is read once, when first asked for;
// every caller gets objects of its own, parsed from the bytes read. Run
// hands the engine the --policy objects as the admission stage admitted
// them, the same to every checker.
type Given struct {
	paths map[rules.Context][]string
	// expand says which paths are walked as directories (--policy) rather
	// than read as one file (--storage-classes).
	expand map[rules.Context]bool
	once   map[rules.Context]*sync.Once
	read   map[rules.Context]*givenFiles
}

// givenFiles are the files of one context as read: the problems of the
// paths, then each file's name and bytes or why it could not be read.
type givenFiles struct {
	pathErrs []error
	names    []string
	data     [][]byte
	errs     []error
}

// NewGiven returns the given context of the options: their Policies and
// StorageClasses.
func NewGiven(opts *rules.Options) *Given {
	g := &Given{
		paths:  map[rules.Context][]string{},
		expand: map[rules.Context]bool{rules.Policies: true},
		once:   map[rules.Context]*sync.Once{},
		read:   map[rules.Context]*givenFiles{},
	}
	if opts != nil {
		g.paths[rules.Policies] = opts.Policies
		if opts.StorageClasses != "" {
			g.paths[rules.StorageClasses] = []string{opts.StorageClasses}
		}
	}
	for _, c := range []rules.Context{rules.Policies, rules.StorageClasses} {
		g.once[c] = &sync.Once{}
	}
	return g
}

// Objects returns fresh objects of the files given for context c, and
// every problem reading and parsing them (as manifest.Read reports them).
// It is safe for concurrent use.
func (g *Given) Objects(c rules.Context) ([]*manifest.Object, []error) {
	once := g.once[c]
	if once == nil || len(g.paths[c]) == 0 {
		return nil, nil
	}
	once.Do(func() { g.read[c] = g.readFiles(c) })
	f := g.read[c]
	errs := append([]error(nil), f.pathErrs...)
	var objs []*manifest.Object
	for i, data := range f.data {
		if f.errs[i] != nil {
			errs = append(errs, f.errs[i])
			continue
		}
		o, _, perrs := manifest.ParseSkipping(f.names[i], data)
		objs = append(objs, o...)
		errs = append(errs, perrs...)
	}
	return objs, errs
}

// readFiles reads the files of context c, in order.
func (g *Given) readFiles(c rules.Context) *givenFiles {
	f := &givenFiles{}
	files := g.paths[c]
	if g.expand[c] {
		files, f.pathErrs = manifest.Expand(files)
	}
	for _, p := range files {
		data, name, err := manifest.ReadBytes(p, nil)
		f.names, f.data, f.errs = append(f.names, name), append(f.data, data), append(f.errs, err)
	}
	return f
}
