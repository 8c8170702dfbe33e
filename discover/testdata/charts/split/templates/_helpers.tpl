{{- define "split.volumes" -}}
- name: config
  configMap:
    name: first
    defaultMode: 0644
{{- end -}}
