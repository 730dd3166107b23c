{{/* The release's full name: the release name, with the chart's name unless it holds it. */}}
{{- define "ktrace.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ktrace.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: recorder
{{- end -}}

{{- define "ktrace.labels" -}}
{{ include "ktrace.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "ktrace.serviceAccountName" -}}
{{- default (include "ktrace.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "ktrace.claimName" -}}
{{- default (include "ktrace.fullname" .) .Values.persistence.existingClaim -}}
{{- end -}}

{{/* The kinds recorded (JSON list): .Values.kinds, checked against grants.yaml, or its
defaults. */}}
{{- define "ktrace.kinds" -}}
{{- $grants := .Files.Get "grants.yaml" | fromYaml -}}
{{- $kinds := list -}}
{{- range $kind := .Values.kinds -}}
{{- if not (hasKey $grants $kind) -}}
{{- fail (printf "kinds: %q is not a kind ktrace records (one of: %s)" $kind (keys $grants | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $kinds = append $kinds $kind -}}
{{- end -}}
{{- if not $kinds -}}
{{- range $kind, $grant := $grants -}}
{{- if $grant.default }}{{ $kinds = append $kinds $kind }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $kinds | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* RBAC rules (YAML) for the recorded kinds read in any of some scopes: "cluster"
(ClusterRole), "namespaces" (a Role in each of .Values.namespaces) or a fixed namespace (a Role
there). dict "root" $ "scopes" (list SCOPE...). */}}
{{- define "ktrace.rules" -}}
{{- $root := .root -}}
{{- $grants := $root.Files.Get "grants.yaml" | fromYaml -}}
{{- $byGroup := dict -}}
{{- range $kind := include "ktrace.kinds" $root | fromJsonArray -}}
{{- $grant := index $grants $kind -}}
{{- $scope := "cluster" -}}
{{- if $grant.namespace -}}{{ $scope = $grant.namespace }}
{{- else if and $grant.namespaced $root.Values.namespaces -}}{{ $scope = "namespaces" }}{{ end -}}
{{- if has $scope $.scopes -}}
{{- range $group := $grant.groups -}}
{{- $_ := set $byGroup $group (append (get $byGroup $group | default list) $kind) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $group := keys $byGroup | sortAlpha }}
- apiGroups: [{{ $group | quote }}]
  resources: {{ index $byGroup $group | toJson }}
  verbs: [get, list, watch]
{{- end -}}
{{- end -}}

{{/* The fixed namespaces (JSON list) some recorded kind is read in (node Leases). */}}
{{- define "ktrace.fixedNamespaces" -}}
{{- $grants := .Files.Get "grants.yaml" | fromYaml -}}
{{- $found := list -}}
{{- range $kind := include "ktrace.kinds" . | fromJsonArray -}}
{{- with (index $grants $kind).namespace }}{{ $found = append $found . }}{{ end -}}
{{- end -}}
{{- $found | uniq | sortAlpha | toJson -}}
{{- end -}}

{{/* Flags and environment both the recorder and the follower read Kafka with. */}}
{{- define "ktrace.kafkaArgs" -}}
- --kafka={{ required "kafka.bootstrap is required with sink: kafka" .Values.kafka.bootstrap }}
- --topic-prefix={{ .Values.kafka.topicPrefix }}
- --kafka-security-protocol={{ .Values.kafka.securityProtocol }}
{{- with .Values.kafka.saslMechanism }}
- --kafka-sasl-mechanism={{ . }}
{{- end }}
{{- if .Values.kafka.tlsSecret }}
- --kafka-ssl-cafile=/etc/ktrace/kafka-tls/ca.crt
{{- end }}
{{- with .Values.kafka.schemaRegistry.url }}
- --schema-registry={{ . }}
- --subject-name-strategy={{ $.Values.kafka.schemaRegistry.subjectNameStrategy }}
{{- end }}
{{- end -}}

{{- define "ktrace.kafkaEnv" -}}
{{- with .Values.kafka.saslUsername }}
- name: KTRACE_KAFKA_SASL_USERNAME
  value: {{ . | quote }}
{{- end }}
{{- with .Values.kafka.saslPasswordSecret.name }}
- name: KTRACE_KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ . }}, key: {{ $.Values.kafka.saslPasswordSecret.key }}}
{{- end }}
{{- with .Values.kafka.schemaRegistry.username }}
- name: KTRACE_SCHEMA_REGISTRY_USERNAME
  value: {{ . | quote }}
{{- end }}
{{- with .Values.kafka.schemaRegistry.passwordSecret.name }}
- name: KTRACE_SCHEMA_REGISTRY_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ . }}, key: {{ $.Values.kafka.schemaRegistry.passwordSecret.key }}}
{{- end }}
{{- end -}}

{{/* Environment of every container: log level, and the API server's address where its
Service cannot be reached. */}}
{{- define "ktrace.commonEnv" -}}
- name: KTRACE_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- with .Values.apiServer.host }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ . | quote }}
{{- end }}
{{- with .Values.apiServer.port }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ . | quote }}
{{- end }}
{{- end -}}
