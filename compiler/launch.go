package compiler

import (
	"fmt"
	"path"
	"strings"
)

// A pytorch training job gets torchrun's settings as PET_* variables
// (torchLaunch): only torchrun reads them. A command kiln cannot rewrite
// (a wrapper such as uv run, a shell script, another launcher) runs as
// given, and if it never starts torchrun every pod trains alone. These
// functions find out whether a command starts torchrun and what to write
// instead when it does not.

// shells are the programs whose -c argument is a script kiln reads word by word.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true}

// launchers start training processes their own way: a script they run is
// given to torchrun instead, not wrapped.
var launchers = map[string]bool{"accelerate": true, "deepspeed": true, "composer": true}

// startsTorchrun reports whether a command (with its args) starts torchrun:
// one of its words is torchrun (any directory) or torch.distributed.run or
// .launch, a shell script's words included.
func startsTorchrun(argv []string) bool {
	for _, el := range argv {
		for _, w := range scriptWords(el) {
			if path.Base(w) == "torchrun" || w == "torch.distributed.run" || w == "torch.distributed.launch" {
				return true
			}
		}
	}
	return false
}

// scriptWords splits a command element into words, dropping the quotes and
// shell punctuation around them.
func scriptWords(s string) []string {
	f := strings.Fields(s)
	for i, w := range f {
		f[i] = strings.Trim(w, "\"'`;&|()")
	}
	return f
}

// torchrunHint says what to write instead of a command that does not start
// torchrun: the same command with torchrun where it runs a Python script or
// module, or (when kiln sees neither) the two forms kiln wires itself.
func torchrunHint(cmd []string) string {
	if script, ok := shellScript(cmd); ok {
		if old, repl, ok := scriptLaunch(scriptWords(script)); ok {
			return fmt.Sprintf("in the script, write %q instead of %q", repl, old)
		}
	} else {
		for i := 1; i < len(cmd); i++ {
			if pythonInterpreter.MatchString(path.Base(cmd[i])) {
				if wired, err := torchLaunch(cmd[i:]); err == nil {
					return "write " + listOf(append(append([]string(nil), cmd[:i]...), wired...))
				}
				break
			}
			if strings.HasSuffix(cmd[i], ".py") && !strings.HasPrefix(cmd[i], "-") {
				if launchers[path.Base(cmd[0])] {
					// Another launcher's flags mean nothing to torchrun.
					return "write " + listOf(append([]string{"torchrun"}, cmd[i:]...)) + " (" + path.Base(cmd[0]) + "'s own flags do not carry over)"
				}
				return "write " + listOf(append(append(append([]string(nil), cmd[:i]...), "torchrun"), cmd[i:]...))
			}
		}
	}
	return "start torchrun in it ([torchrun, train.py, …] or [python, -m, torch.distributed.run, train.py, …]), or use framework generic and wire the launch yourself from RANK, WORLD_SIZE and COORDINATOR_ADDR"
}

// shellScript returns the script of a shell command ([bash, -c, script] or
// [sh, -ec, script]).
func shellScript(cmd []string) (string, bool) {
	if len(cmd) < 3 || !shells[path.Base(cmd[0])] {
		return "", false
	}
	for i := 1; i+1 < len(cmd); i++ {
		a := cmd[i]
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			return "", false
		}
		if strings.Contains(a, "c") {
			return cmd[i+1], true
		}
	}
	return "", false
}

// scriptLaunch finds where a script's words run Python on a script or a
// module ("python3 -u train.py", "python -m train") and returns those words
// and the torchrun words that replace them.
func scriptLaunch(words []string) (old, repl string, ok bool) {
	for i, w := range words {
		if !pythonInterpreter.MatchString(path.Base(w)) {
			continue
		}
		for j := i + 1; j < len(words); j++ {
			a := words[j]
			switch {
			case a == "-m" && j+1 < len(words):
				if m := words[j+1]; m != "pip" && m != "venv" && m != "ensurepip" {
					return strings.Join(words[i:j+2], " "), "torchrun -m " + m, true
				}
			case strings.HasSuffix(a, ".py") && !strings.HasPrefix(a, "-"):
				return strings.Join(words[i:j+1], " "), "torchrun " + a, true
			case strings.HasPrefix(a, "-"):
				continue
			}
			break
		}
	}
	return "", "", false
}

// listOf formats a command as the spec writes it: [uv, run, torchrun, x.py].
func listOf(cmd []string) string { return "[" + strings.Join(cmd, ", ") + "]" }

// petSummary names the PET_* values that say how many processes to start.
func petSummary(t *Training) string {
	nnodes := itoa(t.Nodes.Max)
	if t.Nodes.Elastic {
		nnodes = itoa(t.Nodes.Min) + ":" + nnodes
	}
	return fmt.Sprintf("PET_NNODES=%s, PET_NPROC_PER_NODE=%d, …", nnodes, max(t.GPUsPerNode, 1))
}

// untorched says what runs when the command does not start torchrun.
func untorched(t *Training) string {
	if t.Nodes.Max > 1 {
		return fmt.Sprintf("the %d pods would each train alone, never exchanging gradients", t.Nodes.Max)
	}
	return fmt.Sprintf("the pod would run one process, not one per GPU (%d)", t.GPUsPerNode)
}
