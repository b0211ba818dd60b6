{{/* The chart's name. */}}
{{- define "oncestream.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: <release>-operator, or fullnameOverride. */}}
{{- define "oncestream.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-operator" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "oncestream.selectorLabels" -}}
app.kubernetes.io/name: {{ include "oncestream.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "oncestream.labels" -}}
{{ include "oncestream.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: oncestream
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "oncestream.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "oncestream.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "oncestream.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The cluster-wide name of the webhook configuration: one per release. */}}
{{- define "oncestream.webhookConfigurationName" -}}
{{- printf "%s-%s" (include "oncestream.fullname" .) .Release.Namespace | trunc 253 | trimSuffix "-" -}}
{{- end -}}

{{/* "true" when replicas elect a leader: explicitly, or "auto" with more than one replica. */}}
{{- define "oncestream.leaderElection" -}}
{{- if eq (toString .Values.leaderElection.enabled) "auto" -}}
{{- gt (int .Values.replicaCount) 1 -}}
{{- else -}}
{{- .Values.leaderElection.enabled -}}
{{- end -}}
{{- end -}}

{{/*
The operator's rights on the namespaced objects it manages: the same rules as
deploy/operator/rbac.yaml, which the build generates from the calls the code makes
(OperatorRbacCommittedIT; GeneratedManifestsTest and HelmChartIT check that these equal them).
*/}}
{{- define "oncestream.rules" -}}
- apiGroups: [""]
  resources: [configmaps, services]
  verbs: [get, list, watch, create, patch]
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [list, watch]
- apiGroups: [oncestream.io]
  resources: [streamjobs]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create]
- apiGroups: [oncestream.io]
  resources: [streamjobs/status]
  verbs: [patch]
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, create, patch]
{{- end -}}

{{/* The operator's settings, as the properties file the operator reads (docs/operator.md, "Configuration"). */}}
{{- define "oncestream.settings" -}}
oncestream.operator.poll-interval={{ .Values.operator.pollInterval }}
oncestream.operator.poll-timeout={{ .Values.operator.pollTimeout }}
oncestream.operator.worker-image={{ default (include "oncestream.image" .) .Values.operator.workerImage }}
oncestream.operator.worker-image-pull-policy={{ .Values.operator.workerImagePullPolicy }}
oncestream.operator.worker-termination-grace-seconds={{ .Values.operator.workerTerminationGraceSeconds }}
oncestream.operator.leader-election.enabled={{ include "oncestream.leaderElection" . }}
oncestream.operator.leader-election.lease-duration={{ .Values.leaderElection.leaseDuration }}
oncestream.operator.leader-election.renew-deadline={{ .Values.leaderElection.renewDeadline }}
oncestream.operator.leader-election.retry-period={{ .Values.leaderElection.retryPeriod }}
oncestream.operator.webhook.enabled={{ .Values.webhook.enabled }}
{{- if .Values.webhook.enabled }}
oncestream.operator.webhook.port={{ .Values.webhook.port }}
oncestream.operator.webhook.certificates={{ if eq .Values.webhook.certificates.source "certManager" }}external{{ else }}self{{ end }}
oncestream.operator.webhook.secret-name={{ include "oncestream.fullname" . }}-webhook-tls
oncestream.operator.webhook.service-name={{ include "oncestream.fullname" . }}-webhook
oncestream.operator.webhook.configuration-name={{ include "oncestream.webhookConfigurationName" . }}
oncestream.operator.webhook.certificate-validity={{ .Values.webhook.certificates.validity }}
{{- end }}
{{- if .Values.watchNamespaces }}
quarkus.operator-sdk.controllers.streamjob.namespaces={{ join "," .Values.watchNamespaces }}
{{- end }}
quarkus.log.level={{ .Values.operator.logLevel }}
{{- end -}}
