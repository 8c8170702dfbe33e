package psa

import (
	"fmt"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// check is one upstream check function as it applies at some level and version.
type check struct {
	id policy.CheckID
	fn policy.CheckPodFn
}

// failure is a check that did not allow a pod.
type failure struct {
	check  check
	result policy.CheckResult
}

// judge evaluates pods with upstream's evaluator and names the checks that fail.
//
// policy.Evaluator returns results without check IDs, in the order its
// registry resolved for the level and version (which checks apply, which
// restricted checks override baseline ones). To name them without
// re-implementing that resolution, judge builds a second, "probe" evaluator
// from the same checks whose functions only return their own index: asking it
// for a level and version yields the resolved check list, in the same order as
// the real evaluator's results.
type judge struct {
	eval  policy.Evaluator
	probe policy.Evaluator
	table []check // indexed by the reason the probe checks return

	mu     sync.RWMutex
	checks map[api.LevelVersion][]check
}

func newJudge(checks []policy.Check) (*judge, error) {
	eval, err := policy.NewEvaluator(checks, nil)
	if err != nil {
		return nil, err
	}
	j := &judge{eval: eval, checks: map[api.LevelVersion][]check{}}
	probes := make([]policy.Check, len(checks))
	for i, c := range checks {
		p := c
		p.Versions = make([]policy.VersionedCheck, len(c.Versions))
		for k, v := range c.Versions {
			reason := strconv.Itoa(len(j.table))
			j.table = append(j.table, check{id: c.ID, fn: v.CheckPod})
			v.CheckPod = func(*metav1.ObjectMeta, *corev1.PodSpec) policy.CheckResult {
				return policy.CheckResult{ForbiddenReason: reason}
			}
			p.Versions[k] = v
		}
		probes[i] = p
	}
	if j.probe, err = policy.NewEvaluator(probes, nil); err != nil {
		return nil, err
	}
	return j, nil
}

// checksFor returns the checks upstream runs at a level and version, in its order.
func (j *judge) checksFor(lv api.LevelVersion) []check {
	j.mu.RLock()
	cs, ok := j.checks[lv]
	j.mu.RUnlock()
	if ok {
		return cs
	}
	for _, r := range j.probe.EvaluatePod(lv, &metav1.ObjectMeta{}, &corev1.PodSpec{}) {
		i, _ := strconv.Atoi(r.ForbiddenReason)
		cs = append(cs, j.table[i])
	}
	j.mu.Lock()
	j.checks[lv] = cs
	j.mu.Unlock()
	return cs
}

// evaluate judges a pod at a level and version with upstream's evaluator and
// returns the checks that forbid it, in upstream's order.
func (j *judge) evaluate(lv api.LevelVersion, meta *metav1.ObjectMeta, spec *corev1.PodSpec) ([]failure, error) {
	results := j.eval.EvaluatePod(lv, meta, spec)
	cs := j.checksFor(lv)
	if len(results) != len(cs) {
		return nil, fmt.Errorf("pod security evaluator returned %d results for %s, expected %d", len(results), lv, len(cs))
	}
	var out []failure
	for i, r := range results {
		if !r.Allowed {
			out = append(out, failure{check: cs[i], result: r})
		}
	}
	return out, nil
}
