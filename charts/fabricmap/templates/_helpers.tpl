{{/*
Common names and labels. fabricmap.name is the chart's name (nameOverride replaces it); fabricmap.fullname
prefixes every object's name: fullnameOverride, else the release name when it holds the name, else
<release>-<name>. Both stop at 50 characters, which leaves room for the longest suffix ("-aggregator") within a
Service name's 63.
*/}}
{{- define "fabricmap.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- define "fabricmap.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "fabricmap.name" . -}}
{{- if contains $name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}
{{- end -}}
{{- /* The image reference: repository@digest when a digest is given (it pins the content), else repository:tag. */ -}}
{{- define "fabricmap.image" -}}
{{- $repository := .Values.image.repository -}}
{{- with (.Values.global | default dict).imageRegistry -}}
{{- /* An umbrella chart's registry replaces the repository's own (its first path part, when that names a host). */ -}}
{{- $parts := splitList "/" $repository -}}
{{- if and (gt (len $parts) 1) (or (contains "." (first $parts)) (contains ":" (first $parts)) (eq (first $parts) "localhost")) -}}
{{- $repository = join "/" (rest $parts) -}}
{{- end -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) $repository -}}
{{- end -}}
{{- if .Values.image.digest -}}{{ $repository }}@{{ .Values.image.digest }}
{{- else -}}{{ $repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}
{{- end -}}
{{- /* The labels of every object the chart renders (and of its pods): Kubernetes' recommended ones, then
commonLabels (whose keys may not be these: the schema refuses them). */ -}}
{{- define "fabricmap.labels" -}}
app.kubernetes.io/name: {{ include "fabricmap.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}
{{- define "fabricmap.selector" -}}
app.kubernetes.io/name: {{ include "fabricmap.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}
{{- define "fabricmap.ufmSecret" -}}
{{- .Values.ufm.existingSecret | default (printf "%s-ufm" (include "fabricmap.fullname" .)) -}}
{{- end -}}

{{/*
Who the agent admission policies apply to (the agent's service account) and the node its token is bound to
(the node-name claim of a pod-bound token; "" without one).
*/}}
{{- define "fabricmap.agentWriter" -}}
matchConditions:
  - name: written-by-the-agent
    expression: >-
      request.userInfo.username == "system:serviceaccount:{{ .Release.Namespace }}:{{ include "fabricmap.fullname" . }}-agent"
variables:
  - name: node
    expression: >-
      "authentication.kubernetes.io/node-name" in request.userInfo.extra &&
      size(request.userInfo.extra["authentication.kubernetes.io/node-name"]) == 1
      ? request.userInfo.extra["authentication.kubernetes.io/node-name"][0] : ""
{{- end -}}

{{/*
Who may reach the metrics, health and web ports (a NetworkPolicy "from" list): any pod of the release's
namespace, and the peers of networkPolicy.metricsFrom.
*/}}
{{- define "fabricmap.networkPolicyPeers" -}}
- podSelector: {}
{{- with .Values.networkPolicy.metricsFrom }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Where a component's pod may run and at what priority, from the component's values (.values): priorityClassName,
nodeSelector (with nvidia.com/gpu.present=true added when .values.gpuNodesOnly), tolerations, affinity and topologySpreadConstraints, whose constraints without a labelSelector get
the component's own pods (.component); then the pod's securityContext (.podSecurityContext), with the seccomp
profile RuntimeDefault when it names none. Called with (dict "root" $ "component" "agent" "values" .Values.agent
"podSecurityContext" $psc), indented under the pod's spec.
*/}}
{{- define "fabricmap.podPlacement" -}}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- $nodeSelector := deepCopy (.values.nodeSelector | default dict) }}
{{- if .values.gpuNodesOnly }}
{{- $_ := set $nodeSelector "nvidia.com/gpu.present" "true" }}
{{- end }}
{{- with $nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
{{- $own := include "fabricmap.selector" (dict "root" $.root "component" $.component) | fromYaml }}
topologySpreadConstraints:
  {{- range . }}
  {{- $constraint := deepCopy . }}
  {{- if not $constraint.labelSelector }}
  {{- $_ := set $constraint "labelSelector" (dict "matchLabels" $own) }}
  {{- end }}
  - {{ toYaml $constraint | indent 4 | trim }}
  {{- end }}
{{- end }}
{{- /* seccomp: the container runtime's default profile unless the values name another (the agent's pod too) */}}
{{- $psc := deepCopy (.podSecurityContext | default dict) }}
{{- if not $psc.seccompProfile }}
{{- $_ := set $psc "seccompProfile" (dict "type" "RuntimeDefault") }}
{{- end }}
securityContext:
  {{- toYaml $psc | nindent 2 }}
{{- end -}}

{{/*
A pod's annotations: the component's podAnnotations, under those the chart sets itself (.chart, which win).
Called with (dict "values" .Values.agent "chart" (dict ...)), indented under the pod's metadata.
*/}}
{{- define "fabricmap.podAnnotations" -}}
{{- with merge (deepCopy (.chart | default dict)) (.values.podAnnotations | default dict) }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* A container's extraArgs (appended to the chart's: of a flag given twice, the last one counts), indented under args. */}}
{{- define "fabricmap.extraArgs" -}}
{{- range .extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
The node-label keys the aggregator writes, as a JSON list, resolved from aggregator.nodeLabels.style as
hypernodegen.StyleKeys resolves --label-style: the admission policy and NOTES use them.
*/}}
{{- define "fabricmap.nodeLabelKeys" -}}
{{- $nl := .Values.aggregator.nodeLabels -}}
{{- $keys := list -}}
{{- if ne $nl.style "custom" -}}
{{- $keys = include "fabricmap.styleKeys" $nl.style | fromJsonArray -}}
{{- else -}}
{{- $keys = concat $nl.tierKeys (compact (list $nl.acceleratorKey $nl.acceleratorSubDomainKey)) -}}
{{- end -}}
{{- toJson (compact $keys) -}}
{{- end }}

{{/*
The name of a component's leader-election Lease, resolved as its binary resolves --leader-election-id: the
binary's default (.default), over it the component's config file (.config, keyed by flag name; the aggregator's),
over that the last --leader-election-id among its extraArgs (.args). Its Role names this Lease, and its admission
policy pins its writes to it. Called with (dict "default" "fabricmap-aggregator" "config" .Values.aggregator.config
"args" .Values.aggregator.extraArgs).
*/}}
{{- define "fabricmap.leaderLease" -}}
{{- $id := .default -}}
{{- with .config }}{{ with index . "leader-election-id" }}{{ $id = toString . }}{{ end }}{{ end -}}
{{- $next := false -}}
{{- range .args -}}
{{- if $next -}}
{{- $id = . -}}
{{- $next = false -}}
{{- else if hasPrefix "--leader-election-id=" . -}}
{{- $id = trimPrefix "--leader-election-id=" . -}}
{{- else if eq . "--leader-election-id" -}}
{{- $next = true -}}
{{- end -}}
{{- end -}}
{{- $id -}}
{{- end -}}
{{- define "fabricmap.aggregatorLease" -}}
{{- include "fabricmap.leaderLease" (dict "default" "fabricmap-aggregator" "config" .Values.aggregator.config "args" .Values.aggregator.extraArgs) -}}
{{- end -}}
{{- define "fabricmap.placerLease" -}}
{{- include "fabricmap.leaderLease" (dict "default" "fabricmap-placer" "args" .Values.placer.extraArgs) -}}
{{- end -}}

{{- /* The pods' imagePullSecrets: the chart's and an umbrella chart's global ones, each a name or {name: …},
reduced to their names first so that each name is listed once however it was given. */ -}}
{{- define "fabricmap.imagePullSecrets" -}}
{{- $names := list -}}
{{- range concat (.Values.imagePullSecrets | default list) ((.Values.global | default dict).imagePullSecrets | default list) -}}
{{- if kindIs "string" . -}}
{{- $names = append $names . -}}
{{- else -}}
{{- $names = append $names .name -}}
{{- end -}}
{{- end -}}
{{- with $names | uniq }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . | quote }}
  {{- end }}
{{- end }}
{{- end -}}

{{- /* The ConfigMaps holding the capture in chunks, as a JSON list: those captureJob writes when it is enabled
(fullname-capture-00 … maxChunks-1), else aggregator.capture.configMaps. */ -}}
{{- define "fabricmap.captureConfigMaps" -}}
{{- if .Values.captureJob.enabled -}}
{{- if or .Values.aggregator.capture.configMap .Values.aggregator.capture.configMaps -}}
{{- fail "captureJob.enabled writes the capture itself: leave aggregator.capture.configMap and configMaps empty" -}}
{{- end -}}
{{- $names := list -}}
{{- range $i := until (int .Values.captureJob.maxChunks) -}}
{{- $names = append $names (printf "%s-%02d" (include "fabricmap.capturePrefix" $) $i) -}}
{{- end -}}
{{- toJson $names -}}
{{- else -}}
{{- toJson (.Values.aggregator.capture.configMaps | default list) -}}
{{- end -}}
{{- end -}}

{{- /* The name prefix of the capture's chunk ConfigMaps that captureJob writes. */ -}}
{{- define "fabricmap.capturePrefix" -}}
{{- include "fabricmap.fullname" . }}-capture
{{- end -}}
