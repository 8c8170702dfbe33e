{{- define "app.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
{{- end -}}
