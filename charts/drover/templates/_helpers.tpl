{{/* Chart name, or nameOverride. */}}
{{- define "drover.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name for objects: fullnameOverride, else the release name, with the chart
name appended unless the release name already contains it ("drover" stays
"drover", "prod" becomes "prod-drover").
*/}}
{{- define "drover.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* helm.sh/chart label value. */}}
{{- define "drover.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels that select the agent's pods; never change them in an upgrade (selectors are immutable). */}}
{{- define "drover.selectorLabels" -}}
app.kubernetes.io/name: {{ include "drover.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: agent
{{- end }}

{{/*
Standard labels. Call with a dict: (dict "ctx" $ "component" "agent").
*/}}
{{- define "drover.labels" -}}
{{- $ctx := .ctx -}}
helm.sh/chart: {{ include "drover.chart" $ctx }}
app.kubernetes.io/name: {{ include "drover.name" $ctx }}
app.kubernetes.io/instance: {{ $ctx.Release.Name }}
app.kubernetes.io/version: {{ $ctx.Chart.AppVersion | quote }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: drover
app.kubernetes.io/managed-by: {{ $ctx.Release.Service }}
{{- with $ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The namespace of the chart's namespaced objects: namespaceOverride, else the release's. */}}
{{- define "drover.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Name of the ServiceAccount the agent runs as. */}}
{{- define "drover.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "drover.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false: name an existing ServiceAccount" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Name of the gateway's objects, and of its ServiceAccount: the agents take its token only with its client certificate. */}}
{{- define "drover.gatewayName" -}}
{{- printf "%s-gateway" (include "drover.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The agent image reference: repository@digest when image.digest is set, else the tag (default the appVersion). */}}
{{- define "drover.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The agents watch their Allocations with a field selector on spec.nodeName (agent.config.fieldSelector), which
needs the CRD's selectableFields: beta and on by default from Kubernetes 1.31 (GA in 1.32), alpha and off by
default in 1.30 (feature gate CustomResourceFieldSelectors), absent before. A render for a cluster before 1.31
with the field selector fails, unless agent.customResourceFieldSelectors says the gate is on: the agents could
not watch.
*/}}
{{- define "drover.fieldSelectorGuard" -}}
{{- if and .Values.agent.config.fieldSelector (not .Values.agent.customResourceFieldSelectors) (not (semverCompare ">=1.31.0-0" .Capabilities.KubeVersion.Version)) }}
{{- fail (printf "agent.config.fieldSelector is true, and Kubernetes %s cannot select custom resources by field before 1.31 unless its feature gate CustomResourceFieldSelectors is on (1.30), so the agents could not watch their allocations: set agent.config.fieldSelector=false, or agent.customResourceFieldSelectors=true on a 1.30 cluster with the gate on." .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- end }}

{{/* "true" when raw_exec tasks run on the host, outside the agent container. */}}
{{- define "drover.rawExecOnHost" -}}
{{- if and (include "drover.processTasks" .) .Values.agent.rawExec.hostProcesses }}true{{ end }}
{{- end }}

{{/* "true" when a driver that runs processes on the node (raw_exec, exec, oci) is enabled. */}}
{{- define "drover.processTasks" -}}
{{- if or .Values.agent.rawExec.enabled .Values.agent.exec.enabled .Values.agent.oci.enabled }}true{{ end }}
{{- end }}

{{/*
"true" when the agent runs in the node's network (hostNetwork): its tasks'
ports are the node's, so the agent's checks of them (127.0.0.1), and the
bridge and port mappings of bridge networks, must be in the node's network
too. That is when tasks run on the host (raw_exec's hostProcesses) or when
exec or oci tasks may join networks of their own.
*/}}
{{- define "drover.nodeNetwork" -}}
{{- if or (include "drover.rawExecOnHost" .) (include "drover.allocNetworks" .) }}true{{ end }}
{{- end }}

{{/*
"true" when the agent makes allocations' network namespaces (exec or oci
enabled: the drivers that join them): the CNI plugins are mounted, and the
data dir propagates mounts both ways, so the namespaces (nsfs mounts under
<dataDir>/netns) outlive the agent's container and the node's runtime sees them.
*/}}
{{- define "drover.allocNetworks" -}}
{{- if or .Values.agent.exec.enabled .Values.agent.oci.enabled }}true{{ end }}
{{- end }}

{{/* "true" when cniBinDir is the node's plugins (mounted), not the image's own in /usr/lib/cni. */}}
{{- define "drover.nodeCniBinDir" -}}
{{- if and (include "drover.allocNetworks" .) (ne (clean .Values.agent.network.cniBinDir) "/usr/lib/cni") }}true{{ end }}
{{- end }}

{{/* "true" when the NVIDIA driver library is mounted from the host instead of injected by a RuntimeClass. */}}
{{- define "drover.nvidiaHostLibrary" -}}
{{- if and .Values.devicePlugins.nvidia.enabled (not .Values.devicePlugins.nvidia.runtimeClassName) }}true{{ end }}
{{- end }}

{{/*
Container security context. Host raw_exec tasks (setns into the host's
namespaces, a systemd scope outside the container's cgroup, tasks inheriting
no seccomp filter or reduced capability set) and NVML on host device nodes
need a privileged container, and so do exec tasks (unshare of PID, mount,
IPC and UTS namespaces, mounts in them, setpriv to the task's user, chown of
its directories: CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, CAP_CHOWN and no
seccomp/AppArmor filter on unshare and mount). raw_exec tasks inside the
container and the NVIDIA plugin under its runtime class keep the configured
least-privilege context but as root (a task's `user`, the task cgroups, the
GPUs' device nodes). Otherwise, with only the mock driver, the configured
context as it is: not root by default.
*/}}
{{- define "drover.containerSecurityContext" -}}
{{- if or (include "drover.rawExecOnHost" .) (include "drover.nvidiaHostLibrary" .) .Values.agent.exec.enabled .Values.agent.oci.enabled }}
runAsUser: 0
runAsGroup: 0
privileged: true
allowPrivilegeEscalation: true
readOnlyRootFilesystem: {{ .Values.securityContext.readOnlyRootFilesystem | default false }}
{{- else if include "drover.agentNeedsRoot" . }}
runAsUser: 0
runAsGroup: 0
runAsNonRoot: false
{{ toYaml (omit .Values.securityContext "runAsUser" "runAsGroup" "runAsNonRoot") }}
{{- else }}
{{- toYaml .Values.securityContext }}
{{- end }}
{{- end }}

{{/* "true" when an enabled option needs the agent to run as root: a driver that runs host processes, or GPUs. */}}
{{- define "drover.agentNeedsRoot" -}}
{{- if or (include "drover.processTasks" .) .Values.devicePlugins.nvidia.enabled }}true{{ end }}
{{- end }}

{{/*
The user the agent runs as when that is not root, else empty: the hostPath
data dir, which the kubelet creates root-owned, is then given to it by the
data-dir init container. Without a runAsUser (container or pod), the image's
user, 65532.
*/}}
{{- define "drover.agentUser" -}}
{{- if not (include "drover.agentNeedsRoot" .) }}
{{- $container := .Values.securityContext | default dict }}
{{- $pod := .Values.podSecurityContext | default dict }}
{{- $uid := $container.runAsUser }}
{{- if kindIs "invalid" $uid }}{{ $uid = $pod.runAsUser }}{{ end }}
{{- if kindIs "invalid" $uid }}{{ $uid = 65532 }}{{ end }}
{{- $gid := $container.runAsGroup }}
{{- if kindIs "invalid" $gid }}{{ $gid = $pod.runAsGroup }}{{ end }}
{{- if kindIs "invalid" $gid }}{{ $gid = $uid }}{{ end }}
{{- if ne (int $uid) 0 }}{{ int $uid }}:{{ int $gid }}{{ end }}
{{- end }}
{{- end }}

{{/* Path of the fake device file inside the container. */}}
{{- define "drover.fakeDevicesPath" -}}
/etc/drover/fake-devices.yaml
{{- end }}

{{/*
Node confinement (templates/node-confinement.yaml). The username the agent's
requests carry, which the policies match on.
*/}}
{{- define "drover.agentUsername" -}}
{{- printf "system:serviceaccount:%s:%s" (include "drover.namespace" .) (include "drover.serviceAccountName" .) }}
{{- end }}

{{/*
Whether the node confinement policies render: when enabled, which needs
ValidatingAdmissionPolicy v1 (Kubernetes 1.30). Enabled on an older cluster
(or `helm template` without --kube-version) fails the render: leaving the
agents unconfined must be asked for with nodeConfinement.enabled=false.
*/}}
{{- define "drover.nodeConfinement" -}}
{{- if .Values.nodeConfinement.enabled }}
{{- if not (semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version) }}
{{- fail (printf "nodeConfinement.enabled needs Kubernetes 1.30 or newer (ValidatingAdmissionPolicy v1), and this render is for %s. On an older cluster set nodeConfinement.enabled=false: each agent can then write every node's Allocations and Node status (see the chart's README, \"Node confinement\"). With helm template, give --kube-version of your cluster." .Capabilities.KubeVersion.Version) }}
{{- end }}true
{{- end }}
{{- end }}

{{/*
CEL: the maps (dict "old" OLD "new" NEW, expressions that are maps, {} when
absent) differ in drover.dev/ keys only.
*/}}
{{- define "drover.onlyDroverKeysDiffer" -}}
{{ .new }}.all(k, k.startsWith('drover.dev/') || (k in {{ .old }} && {{ .old }}[k] == {{ .new }}[k])) && {{ .old }}.all(k, k.startsWith('drover.dev/') || k in {{ .new }})
{{- end }}

{{/*
CEL: field (dict "parent" PATH "field" NAME) is the same in oldObject and
object, absent in both counting as the same. PATH may be "" (a top-level
field) or a field that may itself be absent ("status").
*/}}
{{- define "drover.unchanged" -}}
{{- $o := printf "object%s" (ternary "" (printf ".%s" .parent) (eq .parent "")) -}}
{{- $p := printf "oldObject%s" (ternary "" (printf ".%s" .parent) (eq .parent "")) -}}
{{- $oHas := printf "has(%s.%s)" $o .field -}}
{{- $pHas := printf "has(%s.%s)" $p .field -}}
{{- if ne .parent "" }}
{{- $oHas = printf "(has(%s) && %s)" $o $oHas -}}
{{- $pHas = printf "(has(%s) && %s)" $p $pHas -}}
{{- end -}}
({{ $oHas }} ? ({{ $pHas }} && {{ $o }}.{{ .field }} == {{ $p }}.{{ .field }}) : !{{ $pHas }})
{{- end }}

{{/*
An alert's `for`, labels (severity and metrics.prometheusRule.additionalLabels) and annotations (summary,
description, and its runbook in docs/operations.md). Call with
(dict "ctx" $ "rule" <its values> "anchor" <heading anchor in operations.md> "summary" ... "description" ...).
*/}}
{{- define "drover.alertCommon" -}}
{{- $p := .ctx.Values.metrics.prometheusRule -}}
for: {{ .rule.for }}
labels:
  {{- with $p.additionalLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
  severity: {{ .rule.severity | quote }}
annotations:
  summary: {{ .summary | quote }}
  description: {{ .description | quote }}
  {{- if $p.runbookBaseUrl }}
  runbook_url: {{ printf "%s#%s" $p.runbookBaseUrl .anchor | quote }}
  {{- else }}
  runbook: {{ printf "docs/operations.md#%s" .anchor | quote }}
  {{- end }}
{{- end }}

{{/*
The agent container's resources: .Values.resources, with memory (request and limit) computed from
agent.expectedAllocations where it sets neither: agent.memory.baseMi + expectedAllocations × agent.memory.perAllocationKi,
rounded up to MiB (docs/install.md, Agent memory). Where it sets one of the two, the other is the same.
*/}}
{{- define "drover.agentResources" -}}
{{- $r := deepCopy (default dict .Values.resources) -}}
{{- $req := default dict $r.requests -}}
{{- $lim := default dict $r.limits -}}
{{- $perKi := mul (int .Values.agent.expectedAllocations) (int .Values.agent.memory.perAllocationKi) -}}
{{- $computed := printf "%dMi" (add (int .Values.agent.memory.baseMi) (div (add $perKi 1023) 1024)) -}}
{{- $memory := $req.memory | default $lim.memory | default $computed -}}
{{- if not $req.memory }}{{- $_ := set $req "memory" $memory }}{{- end }}
{{- if not $lim.memory }}{{- $_ := set $lim "memory" ($req.memory | default $memory) }}{{- end }}
{{- $_ := set $r "requests" $req -}}
{{- $_ := set $r "limits" $lim -}}
{{- toYaml $r }}
{{- end }}

{{/*
CEL: the drover.dev/ resources that the containers of variables.spec's list
(dict "list" FIELD "who" WORDS) request or limit, one string per container
naming it and them (requests when it has any, else limits), [] when none.
*/}}
{{- define "drover.deviceAsks" -}}
{{- $s := printf "variables.spec.%s" .list -}}
{{- $req := "has(c.resources) && has(c.resources.requests) && c.resources.requests.exists(r, r.startsWith('drover.dev/'))" -}}
{{- $lim := "has(c.resources) && has(c.resources.limits) && c.resources.limits.exists(r, r.startsWith('drover.dev/'))" -}}
has({{ $s }}) ? {{ $s }}.filter(c, ({{ $req }}) || ({{ $lim }})).map(c, '{{ .who }} "' + c.name + '" ' + (({{ $req }}) ? 'requests ' + c.resources.requests.filter(r, r.startsWith('drover.dev/')).join(', ') : 'limits ' + c.resources.limits.filter(r, r.startsWith('drover.dev/')).join(', '))) : []
{{- end }}

{{/*
CEL: the drover.dev/ resources that variables.spec's pod-level resources
(Kubernetes 1.32 and newer) request or limit, as a list of one string, [] when
none.
*/}}
{{- define "drover.podDeviceAsks" -}}
{{- $req := "has(variables.spec.resources) && has(variables.spec.resources.requests) && variables.spec.resources.requests.exists(r, r.startsWith('drover.dev/'))" -}}
{{- $lim := "has(variables.spec.resources) && has(variables.spec.resources.limits) && variables.spec.resources.limits.exists(r, r.startsWith('drover.dev/'))" -}}
({{ $req }}) ? ['the pod-level resources request ' + variables.spec.resources.requests.filter(r, r.startsWith('drover.dev/')).join(', ')] : ({{ $lim }}) ? ['the pod-level resources limit ' + variables.spec.resources.limits.filter(r, r.startsWith('drover.dev/')).join(', ')] : []
{{- end }}

{{/*
How the agent shares its node with Pods: agent.nodeSharing, or, left
empty, resize where in-place Pod resize is stable (1.35) and dedicated
before.
*/}}
{{- define "drover.nodeSharing" -}}
{{- if .Values.agent.nodeSharing }}
{{- .Values.agent.nodeSharing }}
{{- else if semverCompare ">=1.35.0-0" .Capabilities.KubeVersion.Version }}
{{- "resize" }}
{{- else }}
{{- "dedicated" }}
{{- end }}
{{- end }}

{{/*
The reservation container's image: repository@digest, else repository:tag.
*/}}
{{- define "drover.reservationImage" -}}
{{- with .Values.agent.reservationImage }}
{{- if .digest }}{{ printf "%s@%s" .repository .digest }}{{ else }}{{ printf "%s:%s" .repository .tag }}{{ end }}
{{- end }}
{{- end }}
