{{- /* fabricmap-scheduler's leader-election Lease in the release namespace: the scheduler's name. */ -}}
{{- define "fabricmap.schedulerLease" -}}
fabricmap-scheduler
{{- end -}}

{{- /* fabricmap-scheduler's configuration file: the profile the chart carries (files/fabricmap-scheduler.yaml),
leader election on in the release namespace (its Role names the Lease), and the client's rate limits. */ -}}
{{- define "fabricmap.schedulerConfig" -}}
{{- $config := .Files.Get "files/fabricmap-scheduler.yaml" | fromYaml -}}
{{- $_ := set $config "leaderElection" (dict "leaderElect" true "resourceLock" "leases" "resourceNamespace" .Release.Namespace "resourceName" (include "fabricmap.schedulerLease" .)) -}}
{{- $_ := set $config "clientConnection" (dict "qps" .Values.scheduler.kubeAPI.qps "burst" .Values.scheduler.kubeAPI.burst) -}}
{{- toYaml $config -}}
{{- end -}}

{{- /* The schedulerName pods set for fabricmap-scheduler: its profile's (files/fabricmap-scheduler.yaml). */ -}}
{{- define "fabricmap.schedulerName" -}}
{{- (index (.Files.Get "files/fabricmap-scheduler.yaml" | fromYaml).profiles 0).schedulerName -}}
{{- end -}}
