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
