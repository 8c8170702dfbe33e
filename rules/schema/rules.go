package schema

import (
	"github.com/kilnhq/kiln/admit"
	"github.com/kilnhq/kiln/manifest"
	"github.com/kilnhq/kiln/rules"
)

const doc = "kiln sends every object through the code a kube-apiserver runs on a create request (k8s.io/kubernetes v1.37.2: strict decoding as `kubectl apply` asks for it, the scheme's defaulting, the registry strategy's PrepareForCreate and validation; apiextensions-apiserver for custom resources), so what the server would refuse is found before merge. "

// Rules are the schema/… and yaml/… rules.
var Rules = []*rules.Rule{
	{ID: admit.RuleUnknownField, Severity: rules.Error, Summary: "a field the kind does not have (the server refuses it under kubectl's strict field validation)",
		Doc:  doc + "`kubectl apply` sends fieldValidation=Strict by default: a misspelled or misplaced field is an error, not silently dropped.",
		Fail: deployment("replica: 3", "web"), Pass: deployment("replicas: 3", "web")},
	{ID: admit.RuleType, Severity: rules.Error, Summary: "a value of the wrong type (a string where a number belongs, an invalid quantity)",
		Doc:  doc + "The server cannot decode the object at all: `replicas: \"3\"` is a string where an integer belongs, `memory: 1GB` is not a quantity.",
		Fail: deployment(`replicas: "3"`, "web"), Pass: deployment("replicas: 3", "web")},
	{ID: admit.RuleDecode, Severity: rules.Error, Summary: "an object that cannot be sent to or decoded by the API server",
		Doc:  doc + "e.g. a value JSON cannot carry (`.inf`), which kubectl cannot send either.",
		Fail: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\nbinaryData: {}\ndata: {}\nimmutable: .inf\n",
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\ndata: {}\nimmutable: true\n"},
	{ID: admit.RuleRequired, Severity: rules.Error, Summary: "a required field is missing (the server's validation)",
		Doc:  doc + "The message is the server's own: e.g. a Deployment without `spec.selector`, a Job whose pod template has no `restartPolicy`.",
		Fail: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: once, namespace: ci}\nspec:\n  template:\n    spec:\n" + podSpec,
		Pass: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: once, namespace: ci}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n" + podSpec},
	{ID: admit.RuleInvalid, Severity: rules.Error, Summary: "a value the server's validation refuses",
		Doc:  doc + "The message is the server's own: a selector that does not match the template labels, requests above limits, a name that is not a DNS label (`${VAR}` placeholders), an unsupported enum value.",
		Fail: deployment("replicas: 3", "other"), Pass: deployment("replicas: 3", "web")},
	{ID: admit.RuleUnservedKind, Severity: rules.Error, Summary: "an apiVersion the target Kubernetes version does not serve (not yet, off by default, or not by this CRD)",
		Doc:  doc + "The version served depends on --kube-version: autoscaling/v2 from 1.23, admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy from 1.30; alpha APIs and beta APIs added since 1.24 are off unless the cluster enables them. Removed versions are reported by api/removed.",
		Fail: "# kiln lint --kube-version 1.28\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  failurePolicy: Fail\n  matchConstraints: {resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]}\n  validations: [{expression: 'true'}]\n",
		Pass: "# kiln lint --kube-version 1.30\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  failurePolicy: Fail\n  matchConstraints: {resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]}\n  validations: [{expression: 'true'}]\n"},
	{ID: admit.RuleUnknownKind, Severity: rules.Error, Summary: "a kind the API group does not have at any version",
		Doc:  doc + "e.g. `policy/v1` PodSecurityPolicy: the group is the server's own, so this is no custom resource.",
		Fail: "apiVersion: policy/v1\nkind: PodSecurityPolicy\nmetadata: {name: restricted}\nspec: {}\n",
		Pass: "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n"},
	{ID: admit.RuleUncheckedVersion, Severity: rules.Info, Summary: "a version the target Kubernetes serves but kiln's API server code no longer has: its fields are not checked",
		Doc:  "At an older --kube-version, an apiVersion that release serves but Kubernetes 1.37 removed (extensions/v1beta1 Ingress at 1.20, policy/v1beta1 PodSecurityPolicy before 1.25) is not refused, but kiln links the newest API server's code, which no longer has the version's types: the object is not decoded, defaulted or validated. This is a note, not an error; api/deprecated says when the version goes away.",
		Fail: "# kiln lint --kube-version 1.20\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: restricted}\nspec:\n  privileged: false\n  runAsUser: {rule: MustRunAsNonRoot}\n  seLinux: {rule: RunAsAny}\n  supplementalGroups: {rule: RunAsAny}\n  fsGroup: {rule: RunAsAny}\n",
		Pass: "# kiln lint --kube-version 1.20\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: shop}\nspec:\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n"},
	{ID: admit.RuleNoCRD, Severity: rules.Info, Summary: "a custom resource whose CRD is not in the input, in crds: or in kiln's catalog (reported once per kind)",
		Doc:  "kiln judges custom resources against the CustomResourceDefinitions among the linted files, then those the crds: setting of .kiln.yaml names, then those of its built-in catalog (kiln crds list). Without the CRD, kiln cannot check the fields; this is a note, not an error.",
		Fail: "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: shop}\nspec: {size: 3}\n",
		Pass: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gizmos.example.com}\nspec:\n  group: example.com\n  names: {kind: Gizmo, plural: gizmos, singular: gizmo, listKind: GizmoList}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {type: object, properties: {size: {type: integer}}}\n---\napiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: shop}\nspec: {size: 3}\n"},
	{ID: admit.RuleWarning, Severity: rules.Warning, Summary: "a warning the API server returns on create (deprecated fields, ignored settings)",
		Doc:  doc + "These are the server's WarningsOnCreate, which kubectl prints as `Warning:` lines.",
		Fail: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: shop\n  annotations: {volume.beta.kubernetes.io/storage-class: fast}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n",
		Pass: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: shop}\nspec:\n  storageClassName: fast\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n"},
	{ID: admit.RuleInternal, Severity: rules.Warning, Summary: "kiln could not run the server's checks on an object",
		Doc: "The server's code failed on this object inside kiln. The object was judged as written; please report it."},
	{ID: manifest.NoteImplicitType, Severity: rules.Warning, Summary: "a plain YAML value kubectl reads as a boolean or number (yes, on, y, no, 0755, 1e3)",
		Doc:  "kubectl reads YAML as YAML 1.1 (sigs.k8s.io/yaml): `yes`, `on`, `y`, `no` (a country code!) are booleans, `0755` is the octal number 493, `1e3` is 1000. kiln judges what the server receives and warns at the line: quote the value when you mean a string. File modes are not warned: `defaultMode` (secret, configMap, downwardAPI and projected volumes) and a `mode` beside a `path` (their items, Argo Workflows artifacts), matched by field name in any object, are int32 fields documented as octal, so `0644` there is what the author means.",
		Fail: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\ndata:\n  country: \"se\"\n  debug: \"on\"\nimmutable: yes\n",
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\ndata:\n  country: \"se\"\n  debug: \"on\"\nimmutable: true\n"},
	{ID: manifest.NoteDuplicateKey, Severity: rules.Warning, Summary: "a key given twice in a YAML mapping (kubectl keeps the last)",
		Doc:  "kubectl accepts a mapping that repeats a key and sends the last value; the first is silently lost. kiln judges the last value and warns at the second key.",
		Fail: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\ndata:\n  mode: a\n  mode: b\n",
		Pass: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: shop}\ndata:\n  mode: b\n"},
}

// podSpec is the body of an example pod template's spec (indented under
// "spec:" at six spaces) that passes the restricted Pod Security profile, so
// that an example shows its own rule only.
const podSpec = "      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n" +
	"      containers:\n" +
	"      - name: app\n" +
	"        image: nginx:1.27\n" +
	"        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n"

// deployment is an example Deployment with one spec line (replicas) and the
// app label of its pod template (its selector is app: web).
func deployment(specLine, app string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  " + specLine +
		"\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: " + app + "}}\n    spec:\n" + podSpec
}
