package main

import (
	"github.com/kilnhq/kiln/internal/vapcompat"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules/policies"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newPoliciesCmd) }

func newPoliciesCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policies",
		Short: "kiln's built-in rules as ValidatingAdmissionPolicies",
	}
	cmd.AddCommand(newPoliciesExportCmd(e))
	return cmd
}

func newPoliciesExportCmd(e *env) *cobra.Command {
	var actions []string
	var selector, kubeVersion string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print kiln's single-object rules as ValidatingAdmissionPolicies and bindings for a cluster",
		Long: `kiln policies export prints kiln's single-object rules (sidecar/…, jobset/…
except torchrun-nnodes, storage/inline-nfs) as the admissionregistration.k8s.io/v1
ValidatingAdmissionPolicies kiln lint runs, each with a
ValidatingAdmissionPolicyBinding, plus the params they read: the ConfigMap
kiln-rule-params (target Kubernetes version, helper images) in the Namespace
kiln-system. Apply the stream with kubectl apply -f - so the same rules guard
Git and the cluster. The output is deterministic.

--action sets the validationActions of every binding: Warn (the default: the
client sees a warning, nothing is blocked), Deny, Audit, or a comma-separated
combination such as Deny,Audit (the API server rejects Deny with Warn).
--namespace-selector limits the bindings to the namespaces a label selector
matches ("env=prod,team!=ml", "tier in (web,api)", "!legacy").
--kube-version is the version the rules judge against (params.data.kubeVersion).
The policies use two-variable comprehensions: they need an API server that
compiles CEL at 1.32 or later (Kubernetes 1.33+). For an older --kube-version,
whose API server would refuse them, kiln prints nothing and exits 2.

Exit codes: 0 printed, 2 usage error or a --kube-version that cannot run them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := policies.ExportOptions{KubeVersion: manifest.LatestKube}
			var err error
			if opts.Actions, err = policies.ParseActions(actions); err != nil {
				return usageErrorf("--action: %v", err)
			}
			if selector != "" {
				if opts.NamespaceSelector, err = policies.ParseNamespaceSelector(selector); err != nil {
					return usageErrorf("--namespace-selector %q: %v", selector, err)
				}
			}
			if kubeVersion != "" {
				v, err := manifest.ParseKubeVersion(kubeVersion)
				if err != nil {
					return usageErrorf("--kube-version: %v", err)
				}
				if v.Less(manifest.OldestKube) || manifest.LatestKube.Less(v) {
					return usageErrorf("--kube-version %s is outside the range kiln knows (%s to %s)", v, manifest.OldestKube, manifest.LatestKube)
				}
				opts.KubeVersion = v
			}
			var objs []*manifest.Object
			for _, p := range policies.All() {
				objs = append(objs, p.Object)
			}
			if err := vapcompat.Refuse(opts.KubeVersion, objs); err != nil {
				return usageErrorf("--kube-version %s: %v", opts.KubeVersion, err)
			}
			out, err := policies.Export(opts)
			if err != nil {
				return err
			}
			_, err = e.stdout.Write(out)
			return err
		},
	}
	cmd.Flags().StringSliceVar(&actions, "action", []string{"Warn"}, "validationActions of every binding: Deny, Warn or Audit (comma-separated or repeated; Deny,Audit allowed, Deny with Warn is not)")
	cmd.Flags().StringVar(&selector, "namespace-selector", "", `label selector for the namespaces the bindings apply to, e.g. "env=prod,team!=ml" (default: all)`)
	cmd.Flags().StringVar(&kubeVersion, "kube-version", "", "Kubernetes version the rules judge against, written into the params ConfigMap (default "+manifest.LatestKube.String()+")")
	return cmd
}
