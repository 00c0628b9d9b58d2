{{/*
The relay sidecar for a model-server pod: it reads the engine's KV events
from ZMQ on loopback and publishes them to NATS. The engine's address comes
from the pod IP so it matches what the router routes to.
*/}}
{{- define "warmroute.relayContainer" -}}
{{- $r := .Values.relay -}}
- name: warmroute-relay
  image: {{ include "warmroute.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args:
    {{- include "warmroute.relayArgs" . | nindent 4 }}
  env:
    - name: POD_IP
      valueFrom: { fieldRef: { fieldPath: status.podIP } }
  ports:
    - { name: relay-metrics, containerPort: {{ $r.adminPort }} }
  # /healthz answers while the relay runs, whatever NATS or the engine do:
  # readiness holds the model-server pod back only until its relay serves,
  # and a NATS outage restarts nothing.
  readinessProbe:
    httpGet: { path: /healthz, port: relay-metrics }
    periodSeconds: 5
  livenessProbe:
    httpGet: { path: /healthz, port: relay-metrics }
    periodSeconds: 10
    failureThreshold: 3
  resources:
    {{- toYaml $r.resources | nindent 4 }}
  securityContext:
    {{- include "warmroute.containerSecurityContext" . | nindent 4 }}
    runAsUser: 65532
  {{- if or (include "warmroute.natsSecret" .) (include "warmroute.natsAuthSecret" .) }}
  volumeMounts:
    {{- if include "warmroute.natsSecret" . }}
    - { name: warmroute-nats-creds, mountPath: /etc/warmroute/nats, readOnly: true }
    {{- end }}
    {{- if include "warmroute.natsAuthSecret" . }}
    - { name: warmroute-nats-auth, mountPath: {{ include "warmroute.natsAuthDir" . }}, readOnly: true }
    {{- end }}
  {{- end }}
{{- end -}}

{{/* The relay's arguments, also run by the chart's process e2e test. */}}
{{- define "warmroute.relayArgs" -}}
{{- $r := .Values.relay -}}
- relay
- --zmq-url={{ $r.zmq }}
{{- with $r.replay }}
- --replay-url={{ . }}
{{- end }}
{{- with $r.topic }}
- --topic={{ . }}
{{- end }}
- --model={{ required "relay.model is required" $r.model }}
- --endpoint-addr=$(POD_IP):{{ $r.enginePort }}
- --engine-metrics-url=http://127.0.0.1:{{ $r.enginePort }}/metrics
- --engine-health-url=http://127.0.0.1:{{ $r.enginePort }}/health
- --block-size={{ $r.blockSize }}
- --heartbeat={{ $r.heartbeat }}
- --nats-url={{ required "relay needs NATS: set nats.mode to external or embedded" (include "warmroute.natsURL" .) }}
{{- if include "warmroute.natsSecret" . }}
- --nats-creds={{ include "warmroute.natsCredsPath" . }}
{{- end }}
{{- if include "warmroute.natsAuthSecret" . }}
- --nats-nkey={{ include "warmroute.natsAuthDir" . }}/relay.nk
{{- end }}
- --admin-addr=:{{ $r.adminPort }}
- --log-level={{ $r.logLevel }}
- --log-format={{ $r.logFormat }}
{{- range $r.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{- define "warmroute.relayVolumes" -}}
{{- with include "warmroute.natsAuthSecret" . }}
- name: warmroute-nats-auth
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    # The relays' seed only.
    items: [{ key: relay.nk, path: relay.nk }]
{{- end }}
{{- if include "warmroute.natsSecret" . }}
- name: warmroute-nats-creds
  secret:
    secretName: {{ include "warmroute.natsSecret" . }}
    defaultMode: 0440
{{- end }}
{{- end -}}

{{/* vLLM's --kv-events-config JSON matching the relay's endpoints. */}}
{{- define "warmroute.kvEventsConfig" -}}
{{- $r := .Values.relay -}}
{{- $port := regexFind "[0-9]+$" $r.zmq -}}
{{- $cfg := dict "enable_kv_cache_events" true "publisher" "zmq" "endpoint" (printf "tcp://*:%s" $port) "topic" $r.topic -}}
{{- with $r.replay -}}
{{- $_ := set $cfg "replay_endpoint" (printf "tcp://*:%s" (regexFind "[0-9]+$" .)) -}}
{{- end -}}
{{- toJson $cfg -}}
{{- end -}}
