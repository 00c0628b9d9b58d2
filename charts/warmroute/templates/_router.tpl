{{/* The router container: `warmroute serve --config`. */}}
{{- define "warmroute.routerContainer" -}}
- name: router
  image: {{ include "warmroute.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
    {{- include "warmroute.routerArgs" . | nindent 4 }}
  ports:
    - name: grpc
      containerPort: {{ .Values.router.ports.grpc }}
    - name: admin
      containerPort: {{ .Values.router.ports.admin }}
  {{- with .Values.router.extraEnv }}
  env:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  startupProbe:
    httpGet: { path: /healthz, port: admin }
    periodSeconds: 2
    failureThreshold: 30
  livenessProbe:
    {{- if include "warmroute.routerTLS" . }}
    # Kubelet's gRPC probe cannot speak TLS; the admin port is plain HTTP.
    httpGet: { path: /healthz, port: admin }
    {{- else }}
    grpc: { port: {{ .Values.router.ports.grpc }} }
    {{- end }}
    periodSeconds: 10
    failureThreshold: 3
  readinessProbe:
    httpGet: { path: /readyz, port: admin }
    periodSeconds: 5
    failureThreshold: 2
  {{- if and (gt (int .Values.router.drainSeconds) 0) (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) }}
  # Keep answering while Envoy drains and the pod leaves the Service's
  # endpoints; SIGTERM then gives open streams config.shutdownGrace.
  lifecycle:
    preStop:
      sleep: { seconds: {{ int .Values.router.drainSeconds }} }
  {{- end }}
  resources:
    {{- toYaml .Values.router.resources | nindent 4 }}
  securityContext:
    {{- include "warmroute.containerSecurityContext" . | nindent 4 }}
  volumeMounts:
    - { name: config, mountPath: /etc/warmroute, readOnly: true }
    {{- if include "warmroute.natsSecret" . }}
    - { name: nats-creds, mountPath: /etc/warmroute/nats, readOnly: true }
    {{- end }}
    {{- if include "warmroute.natsAuthSecret" . }}
    - { name: nats-auth, mountPath: {{ include "warmroute.natsAuthDir" . }}, readOnly: true }
    {{- end }}
    {{- if .Values.router.mtls.existingSecret }}
    - { name: mtls-ca, mountPath: /etc/warmroute/mtls, readOnly: true }
    {{- end }}
    {{- if .Values.router.tls.existingSecret }}
    - { name: tls, mountPath: {{ include "warmroute.tlsDir" . }}, readOnly: true }
    {{- end }}
    {{- if ne .Values.tokenizers.source "none" }}
    - { name: tokenizers, mountPath: {{ .Values.tokenizers.mountPath }}, readOnly: true }
    {{- end }}
    {{- with .Values.router.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* The router's arguments, also read by the chart's process e2e test. */}}
{{- define "warmroute.routerArgs" -}}
- serve
- --config=/etc/warmroute/serve.yaml
- --log-level={{ .Values.router.logLevel }}
- --log-format={{ .Values.router.logFormat }}
{{- range .Values.router.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{- define "warmroute.routerVolumes" -}}
- name: config
  configMap:
    name: {{ include "warmroute.fullname" . }}-config
{{- if include "warmroute.natsSecret" . }}
- name: nats-creds
  secret:
    secretName: {{ include "warmroute.natsSecret" . }}
    defaultMode: 0440
{{- end }}
{{- with include "warmroute.natsAuthSecret" . }}
- name: nats-auth
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    # The routers' seed only.
    items: [{ key: router.nk, path: router.nk }]
{{- end }}
{{- with .Values.router.mtls.existingSecret }}
- name: mtls-ca
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    # The CA only: the router never holds Envoy's key.
    items: [{ key: ca.crt, path: ca.crt }]
{{- end }}
{{- with .Values.router.tls.existingSecret }}
- name: tls
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    # A kubernetes.io/tls Secret, as cert-manager issues.
    items: [{ key: tls.crt, path: tls.crt }, { key: tls.key, path: tls.key }]
{{- end }}
{{- if eq .Values.tokenizers.source "configMap" }}
- name: tokenizers
  configMap:
    name: {{ required "tokenizers.configMap is required when tokenizers.source=configMap" .Values.tokenizers.configMap }}
{{- else if eq .Values.tokenizers.source "volume" }}
- name: tokenizers
  {{- required "tokenizers.volume is required when tokenizers.source=volume" .Values.tokenizers.volume | toYaml | nindent 2 }}
{{- else if eq .Values.tokenizers.source "initContainer" }}
- name: tokenizers
  emptyDir: {}
{{- else if ne .Values.tokenizers.source "none" }}
{{- fail "tokenizers.source must be none, configMap, volume or initContainer" }}
{{- end }}
{{- with .Values.router.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "warmroute.tokenizerInit" -}}
{{- if eq .Values.tokenizers.source "initContainer" }}
- name: tokenizers
  image: {{ required "tokenizers.initContainer.image is required" .Values.tokenizers.initContainer.image }}
  {{- with .Values.tokenizers.initContainer.command }}
  command:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  env:
    - { name: TOKENIZERS_DIR, value: {{ .Values.tokenizers.mountPath | quote }} }
  securityContext:
    {{- include "warmroute.containerSecurityContext" . | nindent 4 }}
  volumeMounts:
    - { name: tokenizers, mountPath: {{ .Values.tokenizers.mountPath }} }
{{- end }}
{{- end -}}


{{/*
A Go duration ("15s", "1m30s", "500ms") as whole seconds, rounded up.
*/}}
{{- define "warmroute.durationSeconds" -}}
{{- $total := 0.0 -}}
{{- $mult := dict "ns" 1e-9 "us" 1e-6 "µs" 1e-6 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h)" (toString .) -1 -}}
{{- $unit := regexFind "(ns|us|µs|ms|s|m|h)$" . -}}
{{- $total = addf $total (mulf (float64 (trimSuffix $unit .)) (get $mult $unit)) -}}
{{- end -}}
{{- ceil $total | int -}}
{{- end -}}

{{/*
The router pod's terminationGracePeriodSeconds: the drain (preStop), then
the router's shutdownGrace (router.Config's default 15s when unset), plus
margin. A value set explicitly must leave that room.
*/}}
{{- define "warmroute.routerGraceSeconds" -}}
{{- $drain := int .Values.router.drainSeconds -}}
{{- $grace := int (include "warmroute.durationSeconds" (.Values.router.config.shutdownGrace | default "15s")) -}}
{{- $need := add $drain $grace -}}
{{- with .Values.router.terminationGracePeriodSeconds -}}
{{- if le (int .) $need -}}
{{- fail (printf "router.terminationGracePeriodSeconds (%d) must exceed router.drainSeconds (%d) + router.config.shutdownGrace (%ds)" (int .) $drain $grace) -}}
{{- end -}}
{{- int . -}}
{{- else -}}
{{- add $need 5 -}}
{{- end -}}
{{- end -}}
