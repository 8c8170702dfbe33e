-- Argo CD health check for jobset.x-k8s.io JobSets, which Argo CD has none
-- of (it would show a failed training run as Healthy). Wired into argocd-cm
-- as resource.customizations.health.jobset.x-k8s.io_JobSet (see
-- ../argocd-cm-jobset-health.yaml). It uses only what Argo CD gives such a
-- script: the global obj and Lua's base and table libraries (no string
-- library). As Argo CD's own Job check: Healthy once completed, Degraded once
-- failed, Suspended while suspended, Progressing while it runs.
local hs = {}
local status = obj.status or {}

-- condition returns the JobSet condition of type t if it is True.
local function condition(t)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == t and c.status == "True" then
      return c
    end
  end
  return nil
end

-- text is a condition's message, else its reason, else fallback.
local function text(c, fallback)
  if c ~= nil and c.message ~= nil and c.message ~= "" then
    return c.message
  end
  if c ~= nil and c.reason ~= nil and c.reason ~= "" then
    return c.reason
  end
  return fallback
end

local failed = condition("Failed")
if failed ~= nil or status.terminalState == "Failed" then
  hs.status = "Degraded"
  hs.message = text(failed, "JobSet failed")
  return hs
end

local completed = condition("Completed")
if completed ~= nil or status.terminalState == "Completed" then
  hs.status = "Healthy"
  hs.message = text(completed, "JobSet completed")
  return hs
end

local spec = obj.spec or {}
local suspended = condition("Suspended")
if suspended ~= nil or spec.suspend == true then
  hs.status = "Suspended"
  hs.message = text(suspended, "JobSet is suspended")
  local labels = (obj.metadata or {}).labels or {}
  local queue = labels["kueue.x-k8s.io/queue-name"]
  if queue ~= nil then
    hs.message = hs.message .. " (queued in Kueue LocalQueue " .. queue .. ")"
  end
  return hs
end

-- Running: how many child Jobs are ready, of how many.
local jobs = 0
for _, rj in ipairs(spec.replicatedJobs or {}) do
  jobs = jobs + (rj.replicas or 1)
end
local ready, succeeded = 0, 0
for _, s in ipairs(status.replicatedJobsStatus or {}) do
  ready = ready + (s.ready or 0)
  succeeded = succeeded + (s.succeeded or 0)
end
hs.status = "Progressing"
if status.replicatedJobsStatus == nil then
  hs.message = "Waiting for the JobSet controller"
  return hs
end
hs.message = ready .. " of " .. jobs .. " jobs ready"
if succeeded > 0 then
  hs.message = hs.message .. ", " .. succeeded .. " succeeded"
end
local restarts = status.restarts or 0
if restarts > 0 then
  hs.message = hs.message .. ", restarts: " .. restarts
  local policy = spec.failurePolicy or {}
  if policy.maxRestarts ~= nil then
    -- Since JobSet v0.8 some restarts (preemption) do not count against maxRestarts.
    local counted = status.restartsCountTowardsMax or restarts
    hs.message = hs.message .. " (" .. counted .. " of maxRestarts " .. policy.maxRestarts .. " counted)"
  end
end
return hs
