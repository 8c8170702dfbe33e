{{- define "split.volumes" -}}
- name: config
  configMap:
    name: first
    optional: yes
{{- end -}}
