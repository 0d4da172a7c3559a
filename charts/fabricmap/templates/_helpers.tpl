{{/* Common names and labels. */}}
{{- define "fabricmap.name" -}}{{ .Chart.Name }}{{- end -}}
{{- define "fabricmap.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- else -}}{{ printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" }}{{- end -}}
{{- end -}}
{{- define "fabricmap.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}
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
