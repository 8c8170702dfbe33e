#!/usr/bin/env python3
"""Records JobSet statuses as the JobSet controller writes them (record.sh
starts it with kube-apiserver and etcd).

  record.py setup MODULE_DIR WEBHOOK_CERT   the JobSet CRD and webhooks of the module
  record.py record OUTDIR                   JobSets through their lives, one file per state

No kube-controller-manager runs: child Job statuses are set here as the Job
controller sets them (running, complete, failed), and Jobs deleted in the
foreground lose their finalizer as the garbage collector would remove it.
"""
import base64, datetime, json, os, ssl, sys, time, urllib.parse, urllib.request
import yaml

API = "https://127.0.0.1:26443"
TOK = "record-token"
CTX = ssl._create_unverified_context()


def api(method, path, body=None, ctype="application/json"):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(API + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + TOK, "Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, context=CTX, timeout=30) as r:
            return r.status, decode(r.read())
    except urllib.error.HTTPError as e:
        return e.code, decode(e.read())
    except urllib.error.URLError:
        return 0, None  # not listening yet


def decode(body):
    """JSON, or the text of a plain answer (/readyz)."""
    try:
        return json.loads(body or b"null")
    except ValueError:
        return body.decode(errors="replace")


def must(code_obj, what):
    code, obj = code_obj
    if code >= 300:
        sys.exit("%s: %d %s" % (what, code, json.dumps(obj)[:2000]))
    return obj


def gc():
    """The garbage collector's part: a Job deleted in the foreground has no
    pods here (no Job controller runs), so the collector would remove its
    foregroundDeletion finalizer at once."""
    code, jobs = api("GET", JOBS)
    if code != 200:
        return  # the server is not up yet
    for j in jobs["items"]:
        if j["metadata"].get("deletionTimestamp") and "foregroundDeletion" in (j["metadata"].get("finalizers") or []):
            api("PATCH", JOBS + "/" + j["metadata"]["name"], {"metadata": {"finalizers": None, "resourceVersion": j["metadata"]["resourceVersion"]}}, "application/merge-patch+json")


def wait(what, fn, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        gc()
        v = fn()
        if v:
            return v
        time.sleep(0.3)
    sys.exit("timed out waiting for " + what)


JS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets"
JOBS = "/apis/batch/v1/namespaces/default/jobs"


def jobset(name, replicas=2, max_restarts=None, suspend=False, queue=None):
    md = {"name": name, "namespace": "default"}
    if queue:
        md["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    spec = {"replicatedJobs": [{"name": "worker", "replicas": replicas, "template": {"spec": {
        "backoffLimit": 0, "template": {"spec": {
            "restartPolicy": "Never",
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "trainer", "image": "ghcr.io/acme/train:2.3",
                            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}}}}}]}
    if max_restarts is not None:
        spec["failurePolicy"] = {"maxRestarts": max_restarts}
    if suspend:
        spec["suspend"] = True
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": md, "spec": spec}


def get(name):
    return must(api("GET", JS + "/" + name), "get " + name)


def jobs_of(name, restart=None):
    sel = "jobset.sigs.k8s.io/jobset-name=" + name
    items = must(api("GET", JOBS + "?labelSelector=" + urllib.parse.quote(sel)), "list jobs")["items"]
    items = [j for j in items if not j["metadata"].get("deletionTimestamp")]
    if restart is not None:
        items = [j for j in items if j["metadata"]["labels"].get("jobset.sigs.k8s.io/restart-attempt") == str(restart)]
    return sorted(items, key=lambda j: j["metadata"]["name"])


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def set_job_status(job, status):
    job = dict(job)
    job["status"] = status
    return must(api("PUT", JOBS + "/" + job["metadata"]["name"] + "/status", job), "job status " + job["metadata"]["name"])


def running(job):
    return {"startTime": now(), "active": 1, "ready": 1, "terminating": 0, "uncountedTerminatedPods": {}}


def complete(job):
    t = now()
    return {"startTime": job.get("status", {}).get("startTime") or t, "completionTime": t, "succeeded": 1, "active": 0, "ready": 0,
            "terminating": 0, "completedIndexes": "0" if job["spec"].get("completionMode") == "Indexed" else None,
            "uncountedTerminatedPods": {},
            "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods", "lastProbeTime": t, "lastTransitionTime": t},
                {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods", "lastProbeTime": t, "lastTransitionTime": t}]}


def failed(job):
    t = now()
    return {"startTime": job.get("status", {}).get("startTime") or t, "failed": 1, "active": 0, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {},
            "conditions": [
                {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit", "lastProbeTime": t, "lastTransitionTime": t},
                {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit", "lastProbeTime": t, "lastTransitionTime": t}]}


def clean(obj):
    """What kubectl get -o yaml shows, less the fields that change per run."""
    md = obj["metadata"]
    for k in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"]:
        md.pop(k, None)
    for c in obj.get("status", {}).get("conditions", []) or []:
        c["lastTransitionTime"] = "2026-12-03T10:00:00Z"
    return obj


HEADER = ("# Recorded with examples/argocd/jobset/record/record.sh: JobSet v0.10.1's controller and\n"
          "# webhooks, kube-apiserver v1.37.2, child Job statuses set as the Job controller sets them\n"
          "# (metadata.name is the file's name; timestamps fixed).\n")


def write(obj, file, comment):
    obj["metadata"]["name"] = file
    with open(os.path.join(OUT, file + ".yaml"), "w") as f:
        f.write(HEADER + comment)
        yaml.safe_dump(obj, f, sort_keys=False, default_flow_style=False)
    print("recorded", file, json.dumps(obj.get("status")))


def record(name, file, comment):
    write(clean(get(name)), file, comment)


def create(obj):
    must(api("POST", JS, obj), "create " + obj["metadata"]["name"])


def status_has(name, pred):
    return lambda: pred(get(name).get("status") or {})


def cond(st, t):
    for c in st.get("conditions") or []:
        if c["type"] == t and c["status"] == "True":
            return c
    return None


def setup(module, cert):
    wait("the API server", lambda: api("GET", "/readyz")[0] == 200, 90)
    base = os.path.join(module, "config/components")
    crd = yaml.safe_load(open(os.path.join(base, "crd/bases/jobset.x-k8s.io_jobsets.yaml")))
    must(api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd), "create the CRD")
    ca = base64.b64encode(open(cert, "rb").read()).decode()
    for d in yaml.safe_load_all(open(os.path.join(base, "webhook/manifests.yaml"))):
        if not d:
            continue
        for w in d["webhooks"]:
            w["clientConfig"] = {"url": "https://127.0.0.1:19443" + w["clientConfig"]["service"]["path"], "caBundle": ca}
        must(api("POST", "/apis/admissionregistration.k8s.io/v1/" + d["kind"].lower() + "s", d), "create " + d["kind"])
    wait("the JobSet API", lambda: api("GET", JS)[0] == 200)


def run():
    # 1. A JobSet just created, its jobs starting, then running, then completed.
    create(jobset("completed", max_restarts=3))
    wait("controller status", status_has("completed", lambda st: st.get("replicatedJobsStatus")))
    wait("2 jobs", lambda: len(jobs_of("completed")) == 2)
    record("completed", "starting", "# State: the controller created the two child Jobs; no pod is ready yet.\n")
    for j in jobs_of("completed"):
        set_job_status(j, running(j))
    wait("ready 2", status_has("completed", lambda st: sum(s.get("ready", 0) for s in st.get("replicatedJobsStatus", [])) == 2))
    record("completed", "running", "# State: both child Jobs have their pods ready; training runs.\n")
    for j in jobs_of("completed"):
        set_job_status(j, complete(j))
    wait("Completed", status_has("completed", lambda st: cond(st, "Completed")))
    record("completed", "completed", "# State: every child Job completed.\n")

    # 2. A job fails: the failure policy restarts the JobSet, then gives up.
    create(jobset("failed", max_restarts=1))
    wait("2 jobs", lambda: len(jobs_of("failed", 0)) == 2)
    j = jobs_of("failed", 0)[0]
    set_job_status(j, failed(j))
    wait("restart", status_has("failed", lambda st: st.get("restarts", 0) == 1))
    wait("2 new jobs", lambda: len(jobs_of("failed", 1)) == 2)
    js = jobs_of("failed", 1)
    set_job_status(js[0], running(js[0]))
    wait("ready 1", status_has("failed", lambda st: sum(s.get("ready", 0) for s in st.get("replicatedJobsStatus", [])) == 1))
    record("failed", "restarting", "# State: a child Job failed; the failure policy restarted the JobSet once.\n")
    j = jobs_of("failed", 1)[1]
    set_job_status(j, failed(j))
    wait("Failed", status_has("failed", lambda st: cond(st, "Failed")))
    record("failed", "failed", "# State: a child Job failed again and maxRestarts (1) is spent.\n")

    # 3. No failure policy: the first failed job fails the JobSet.
    create(jobset("failed-no-policy"))
    wait("2 jobs", lambda: len(jobs_of("failed-no-policy")) == 2)
    j = jobs_of("failed-no-policy")[0]
    set_job_status(j, failed(j))
    wait("Failed", status_has("failed-no-policy", lambda st: cond(st, "Failed")))
    record("failed-no-policy", "failed-no-policy", "# State: a child Job failed under a JobSet without failure policy.\n")

    # 4. Created suspended (as Kueue creates it until the queue admits it), then resumed.
    create(jobset("suspended", max_restarts=3, suspend=True, queue="gpu-a100"))
    wait("Suspended", status_has("suspended", lambda st: cond(st, "Suspended")))
    record("suspended", "suspended", "# State: created suspended, as Kueue creates it until the queue admits it.\n")
    must(api("PATCH", JS + "/suspended", {"spec": {"suspend": False}}, "application/merge-patch+json"), "resume")
    wait("resumed", status_has("suspended", lambda st: any(c["type"] == "Suspended" and c["status"] == "False" for c in st.get("conditions", []))))
    wait("2 jobs", lambda: len(jobs_of("suspended")) == 2)
    record("suspended", "resumed", "# State: admitted and resumed; the Suspended condition turned False.\n")
    # Before the controller's first update: the starting JobSet without status.
    obj = yaml.safe_load(open(os.path.join(OUT, "starting.yaml")))
    obj.pop("status")
    write(obj, "no-status", "# State: the starting JobSet without its status: what Argo CD sees before the controller's first update.\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "setup":
        setup(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "record":
        OUT = sys.argv[2]
        os.makedirs(OUT, exist_ok=True)
        run()
    else:
        sys.exit(__doc__)
