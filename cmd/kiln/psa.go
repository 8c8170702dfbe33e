package main

import (
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/session"
	"github.com/kilnhq/kiln/settings"
	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newPSACmd) }

func newPSACmd(e *env) *cobra.Command {
	return group("psa", "Pod Security Admission tools", newPSAPlanCmd(e))
}

func newPSAPlanCmd(e *env) *cobra.Command {
	var format, kubeVersion, config string
	cmd := &cobra.Command{
		Use:   "plan [PATH...|-]",
		Short: "Plan Pod Security labels per namespace: the strictest level every workload passes, and what blocks the next",
		Long:  helpText("psa-plan"),
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
					return err
				}
			}
			s, err := session.New(given, args, e.stdin)
			if err != nil {
				return err
			}
			p, err := s.PlanPSA(args)
			if err != nil {
				return err
			}
			if format == "json" {
				err = p.Plan.WriteJSON(e.stdout)
			} else {
				err = p.Plan.WriteText(e.stdout)
			}
			if err != nil {
				return err
			}
			if len(p.InputErrors) > 0 {
				return session.InputErrors(p.InputErrors)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	cmd.Flags().StringVar(&kubeVersion, "kube-version", "", "target Kubernetes version; the plan pins Pod Security to it (default "+manifest.LatestKube.String()+")")
	cmd.Flags().StringVar(&config, "config", "", "config file (path excludes, kube-version and psa are read from it)")
	return cmd
}
