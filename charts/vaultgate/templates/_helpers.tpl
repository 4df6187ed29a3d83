{{/* Chart name, truncated to the 63 characters DNS labels allow. */}}
{{- define "vaultgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name: <release>-vaultgate, or the release name alone when it already contains it. */}}
{{- define "vaultgate.fullname" -}}
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

{{- define "vaultgate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "vaultgate.labels" -}}
helm.sh/chart: {{ include "vaultgate.chart" . }}
app.kubernetes.io/name: {{ include "vaultgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: vaultgate
{{- end }}

{{/* Selector labels of one component (webhook | controller). Call with (dict "ctx" . "component" "webhook"). */}}
{{- define "vaultgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vaultgate.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "vaultgate.componentLabels" -}}
{{ include "vaultgate.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "vaultgate.webhook.fullname" -}}
{{- printf "%s-webhook" (include "vaultgate.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "vaultgate.controller.fullname" -}}
{{- printf "%s-controller" (include "vaultgate.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "vaultgate.webhook.serviceAccountName" -}}
{{- if .Values.webhook.serviceAccount.create }}
{{- default (include "vaultgate.webhook.fullname" .) .Values.webhook.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.webhook.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "vaultgate.controller.serviceAccountName" -}}
{{- if .Values.controller.serviceAccount.create }}
{{- default (include "vaultgate.controller.fullname" .) .Values.controller.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.controller.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding the webhook serving pair (and, when vaultgate manages it, the CA). */}}
{{- define "vaultgate.certSecretName" -}}
{{- default (printf "%s-tls" (include "vaultgate.webhook.fullname" .)) .Values.certs.secretName }}
{{- end }}

{{/*
Who provides the webhook certificate:
  cert-manager  certManager.enabled (cert-manager issues, cainjector fills caBundle)
  external      webhook.caBundle set (you bring the Secret and the CA; nobody rotates)
  vaultgate     otherwise (the controller's cert keeper creates, rotates and injects)
*/}}
{{- define "vaultgate.certMode" -}}
{{- if .Values.certManager.enabled }}cert-manager{{- else if .Values.webhook.caBundle }}external{{- else }}vaultgate{{- end }}
{{- end }}

{{- define "vaultgate.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "vaultgate.mutatingWebhookConfigurationName" -}}
{{- printf "%s-mutate" (include "vaultgate.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "vaultgate.validatingWebhookConfigurationName" -}}
{{- printf "%s-validate" (include "vaultgate.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Label selector the cert keeper uses to find the configurations it injects caBundle into. */}}
{{- define "vaultgate.injectSelector" -}}
vaultgate.io/inject-ca-bundle=true,app.kubernetes.io/instance={{ .Release.Name }}
{{- end }}

{{/* Container security context shared by both Deployments (restricted Pod Security Standard). */}}
{{- define "vaultgate.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "vaultgate.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.fsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* Pod spread: across nodes (hard when asked) and zones (soft), so one node or zone loss leaves a replica. */}}
{{- define "vaultgate.topologySpread" -}}
- maxSkew: 1
  topologyKey: kubernetes.io/hostname
  whenUnsatisfiable: {{ ternary "DoNotSchedule" "ScheduleAnyway" .ctx.Values.highAvailability.requireDistinctNodes }}
  labelSelector:
    matchLabels:
      {{- include "vaultgate.selectorLabels" . | nindent 6 }}
- maxSkew: 1
  topologyKey: topology.kubernetes.io/zone
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "vaultgate.selectorLabels" . | nindent 6 }}
{{- end }}
