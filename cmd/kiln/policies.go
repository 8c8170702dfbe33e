package main

import (
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/session"
	"github.com/spf13/cobra"
)

func newPoliciesCmd(e *env) *cobra.Command {
	return group("policies", "kiln's built-in rules as ValidatingAdmissionPolicies", newPoliciesExportCmd(e))
}

func newPoliciesExportCmd(e *env) *cobra.Command {
	var actions []string
	var selector, kubeVersion string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print kiln's single-object rules as ValidatingAdmissionPolicies and bindings for a cluster",
		Long:  helpText("policies-export"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := session.ExportPolicies(session.ExportOptions{Actions: actions, NamespaceSelector: selector, KubeVersion: kubeVersion})
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
