{{/*
The labels of every object: the name, the part-of label that
deploy/kustomization.yaml adds, and Helm's own two.
*/}}
{{- define "kerf.labels" -}}
app.kubernetes.io/name: kerf
app.kubernetes.io/part-of: kerf
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{/*
The image of kerf serve and of the agent: repository:tag, the tag
defaulting to the chart's appVersion.
*/}}
{{- define "kerf.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
