{{- /* SPDX-License-Identifier: Apache-2.0 */ -}}
{{/* Labels on every object: the chart's own plus commonLabels. */}}
{{- define "kt.labels" -}}
app.kubernetes.io/name: trainer
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ default .Chart.Name .Values.nameOverride }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Selector labels of one component (webhook or controller-manager); fixed, as the
     kustomize install's, so the Service selects the same pods either way. */}}
{{- define "kt.selector" -}}
app.kubernetes.io/name: trainer
app.kubernetes.io/component: {{ . }}
{{- end }}

{{- define "kt.image" -}}
{{- $tag := default .Chart.Version .Values.image.tag -}}
{{- if .Values.image.registry -}}
{{ printf "%s/%s:%s" .Values.image.registry .Values.image.repository $tag }}
{{- else -}}
{{ printf "%s:%s" .Values.image.repository $tag }}
{{- end -}}
{{- end }}

{{- define "kt.serviceName" -}}
{{ default "kubeflow-trainer-controller-manager" .Values.manager.config.certManagement.serviceName }}
{{- end }}

{{- define "kt.secretName" -}}
{{ default "kubeflow-trainer-webhook-cert" .Values.manager.config.certManagement.secretName }}
{{- end }}

{{- define "kt.statusGate" -}}
{{- if (get (default dict .Values.manager.config.featureGates) "TrainJobStatus") }}true{{ end -}}
{{- end }}

{{/* clientConfig of one webhook path. */}}
{{- define "kt.clientConfig" -}}
{{- if .root.Values.webhook.url }}
url: {{ printf "%s%s" (trimSuffix "/" .root.Values.webhook.url) .path | quote }}
{{- else }}
service:
  name: {{ include "kt.serviceName" .root }}
  namespace: {{ .root.Release.Namespace }}
  path: {{ .path }}
{{- end }}
{{- end }}

{{/* The pod-level settings shared by both Deployments. */}}
{{- define "kt.podCommon" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- with .Values.image.pullSecrets }}
imagePullSecrets:
{{ toYaml . }}
{{- end }}
{{- with .Values.manager.nodeSelector }}
nodeSelector:
{{ toYaml . | indent 2 }}
{{- end }}
{{- with .Values.manager.tolerations }}
tolerations:
{{ toYaml . }}
{{- end }}
{{- end }}
