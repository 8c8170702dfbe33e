package conformance

// knownDifferences names each disagreement kiln accepts, keyed
// "<corpus> <Kind/namespace/name> <what>", with the reason.
var knownDifferences = map[string]string{}

// ownRules are kiln's own rules whose errors are about what happens after
// the API server stored the object (a controller, a provisioner, the
// program in the pod), with why no API server gives them: their errors are
// counted and named, not compared.
var ownRules = map[string]string{
	"jobset/torchrun-nnodes":  "torchrun's flags are read by the program at run time: the server stores the JobSet and its pods start as separate single-node trainings",
	"sidecar/classic-in-job":  "the server creates the Job's pods; that they never complete is what the kubelet and the Job controller see later",
	"storage/rwx-unsupported": "the server stores the claim; the CSI provisioner leaves it Pending later",
}

// policyDifference is a difference between kiln test and the server that
// kiln accepts: where kiln's message says Kiln, the server's says Server.
type policyDifference struct {
	Kiln, Server, Reason string
}

// managedFields: the server records the request's field manager entry
// before admission, on every create (named or generateName, dry-run or
// not): {manager: the client's fieldManager or user agent (Go-http-client
// here; kubectl-client-side-apply, kubectl-create, kubectl for server-side
// apply, argocd-controller, kustomize-controller, helm), operation Update
// (Apply for server-side apply), apiVersion, time: the request's, fieldsType
// FieldsV1, fieldsV1: the fields sent}. Who applies the manifests is not in
// them, so kiln fills in no entry (admit.Filled's managedFields row) and a
// policy that reads managedFields sees an empty list.
var managedFields = policyDifference{Kiln: "managedFields 0", Server: "managedFields 1",
	Reason: "managedFields: the server records the client's field manager entry before admission; kiln sets none (admit.Filled)"}

// knownPolicyDifferences names each accepted difference of TestPolicyTest,
// keyed "<suite>: <case>".
var knownPolicyDifferences = map[string]policyDifference{
	"generatename: a named create":                 managedFields,
	"generatename: a generateName create":          managedFields,
	"generatename: a generateName create, dry-run": managedFields,
}
