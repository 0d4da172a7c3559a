{{/* Common names and labels. */}}
{{- define "fabricmap.name" -}}{{ .Chart.Name }}{{- end -}}
{{- define "fabricmap.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}
{{- /* The image reference: repository@digest when a digest is given (it pins the content), else repository:tag. */ -}}
{{- define "fabricmap.image" -}}
{{- if .Values.image.digest -}}{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}
{{- end -}}
{{- define "fabricmap.labels" -}}
app.kubernetes.io/name: {{ include "fabricmap.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
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
