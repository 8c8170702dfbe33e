package main

import (
	"github.com/kilnhq/kiln/compiler"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/checkers"
	"github.com/kilnhq/kiln/rules/psa"
	"github.com/kilnhq/kiln/settings"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newPSACmd) }

func newPSACmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "psa",
		Short: "Pod Security Admission tools",
	}
	cmd.AddCommand(newPSAPlanCmd(e))
	return cmd
}

func newPSAPlanCmd(e *env) *cobra.Command {
	var format, kubeVersion, config string
	cmd := &cobra.Command{
		Use:   "plan [PATH...|-]",
		Short: "Plan Pod Security labels per namespace: the strictest level every workload passes, and what blocks the next",
		Long: `For each namespace in the input (and each namespace that workloads name but
the input does not define), kiln psa plan judges every workload with the
upstream Pod Security evaluator, as kiln lint does, and prints:
  - the strictest level (restricted, baseline, privileged) every workload in the
    namespace passes, at the target version or, if only an older one passes, at
    the newest version that does;
  - the labels to roll it out, in the order of the upstream migration guide:
    audit, then warn, then enforce (then audit and warn at the next level);
  - per workload, the checks that block the next level, with file:line:col.
  - what kiln fix would gain: the checks it repairs are marked, and when it
    repairs all that block the next level, the level it reaches;
  - for a Namespace defined in the input, where to edit its labels (file:line)
    instead of kubectl label, which a GitOps controller would revert;
  - for one that is not, what kiln lint judges it with: the labels
    psa.namespaces gives it in the config, privileged for kube-system,
    kube-public and kube-node-lease, else the assumed level (psa.level).
Workloads without metadata.namespace are in "default". App specs among the
inputs are compiled first; without --kube-version (or kubeVersion in the
config) the plan is for the oldest spec.target.kubernetes among them.

Exit codes: 0 plan printed, 2 usage or input error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageErrorf("--format %q: use text or json", format)
			}
			given := settings.New()
			for _, a := range []settings.Assignment{{Key: "config", Value: settings.Scalar(config), From: "--config"}, {Key: "kubeVersion", Value: settings.Scalar(kubeVersion), From: "--kube-version"}} {
				if a.Value.Value == "" {
					continue
				}
				if err := given.Apply(a); err != nil {
					return &exitError{code: exitInput, msg: err.Error()}
				}
			}
			s, _, opts, err := loadSettings(given, args)
			if err != nil {
				return err
			}
			set, objs, inputErrs := loadObjects(e, args, s, opts)
			if s.KubeVersion == "" {
				if v, ok := specTarget(set.Objects()); ok {
					opts.KubeVersion = v
				}
			}
			plan, err := psa.NewPlanWith(objs, opts.KubeVersion, psa.PlanOptions{Fixable: checkers.IsFixable, Options: opts})
			if err != nil {
				return &exitError{code: exitInput, msg: err.Error()}
			}
			if format == "json" {
				err = plan.WriteJSON(e.stdout)
			} else {
				err = plan.WriteText(e.stdout)
			}
			if err != nil {
				return err
			}
			if len(inputErrs) > 0 {
				printInputErrors(e, inputErrs)
				return &exitError{code: exitInput}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	cmd.Flags().StringVar(&kubeVersion, "kube-version", "", "target Kubernetes version; the plan pins Pod Security to it (default "+manifest.LatestKube.String()+")")
	cmd.Flags().StringVar(&config, "config", "", "config file (path excludes, kube-version and psa are read from it)")
	return cmd
}

// specTarget returns the oldest spec.target.kubernetes of the App specs
// among objs, if any names one.
func specTarget(objs []*manifest.Object) (manifest.KubeVersion, bool) {
	var oldest manifest.KubeVersion
	found := false
	for _, o := range objs {
		if !compiler.IsSpec(o) {
			continue
		}
		content, err := o.Content()
		if err != nil {
			continue
		}
		spec, _ := content["spec"].(map[string]any)
		target, _ := spec["target"].(map[string]any)
		s, _ := target["kubernetes"].(string)
		v, err := manifest.ParseKubeVersion(s)
		if err != nil {
			continue
		}
		if !found || v.Less(oldest) {
			oldest, found = v, true
		}
	}
	return oldest, found
}
