{{/* The labels the Deployment selects its pods by: the release's own, so two releases never share a pod. */}}
{{- define "nginx-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The environment variable Kubernetes gives the backend Service's cluster IP (pkg/kubelet/envvars). */}}
{{- define "nginx-gateway.backendHostVar" -}}
{{ printf "%s_SERVICE_HOST" (.Values.backend.service | upper | replace "-" "_") }}
{{- end }}
