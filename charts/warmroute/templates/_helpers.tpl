{{/* Names and labels shared by every template. */}}

{{- define "warmroute.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "warmroute.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "warmroute.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "warmroute.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "warmroute.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "warmroute.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: warmroute
{{- end -}}

{{/* Selector labels for one component: pass (dict "ctx" $ "component" "router"). */}}
{{- define "warmroute.selector" -}}
app.kubernetes.io/name: {{ include "warmroute.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "warmroute.image" -}}
{{- include "warmroute.imageRef" (dict "image" .Values.image "tag" (default .Chart.AppVersion .Values.image.tag)) -}}
{{- end -}}

{{/*
An image reference: repository:tag, pinned as repository:tag@digest when
the image's digest is set (the tag then only documents the version).
*/}}
{{- define "warmroute.imageRef" -}}
{{- $ref := printf "%s:%s" .image.repository (default .image.tag .tag) -}}
{{- if .image.digest }}{{ $ref = printf "%s@%s" $ref .image.digest }}{{ end -}}
{{- $ref -}}
{{- end -}}

{{- define "warmroute.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "warmroute.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The NATS URL the router and relays use, or "" when NATS is off. */}}
{{- define "warmroute.natsURL" -}}
{{- if not (has .Values.nats.mode (list "none" "external" "embedded")) -}}
{{- fail "nats.mode must be none, external or embedded" -}}
{{- end -}}
{{- if eq .Values.nats.mode "external" -}}
{{- required "nats.external.url is required when nats.mode=external" .Values.nats.external.url -}}
{{- else if eq .Values.nats.mode "embedded" -}}
{{- printf "nats://%s-nats:%d" (include "warmroute.fullname" .) (int .Values.nats.embedded.port) -}}
{{- end -}}
{{- end -}}

{{/* Name of the Secret holding NATS credentials, or "" when there is none. */}}
{{- define "warmroute.natsSecret" -}}
{{- if eq .Values.nats.mode "external" -}}
{{- if .Values.nats.external.existingSecret -}}
{{- .Values.nats.external.existingSecret -}}
{{- else if .Values.nats.external.creds -}}
{{- printf "%s-nats-creds" (include "warmroute.fullname" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "warmroute.natsCredsPath" -}}
{{- printf "/etc/warmroute/nats/%s" .Values.nats.external.credsKey -}}
{{- end -}}

{{/*
The router's configuration file (schema: router.Config). Listen addresses
come from the chart's ports so Services and probes always match; everything
else is router.config verbatim, plus the NATS connection when NATS is on.
*/}}
{{- define "warmroute.serveConfig" -}}
{{- $cfg := deepCopy .Values.router.config -}}
{{- if and .Values.examples.sim.enabled (or (eq .Values.nats.mode "none") (not .Values.relay.enabled)) -}}
{{- fail "examples.sim.enabled: the simulators are announced by their relay sidecars over NATS; set nats.mode=embedded (or external with nats.external.url) and keep relay.enabled=true" -}}
{{- end -}}
{{- if not (include "warmroute.learnsEndpoints" .) -}}
{{- fail "the router would know no model server and could route no request. Set one of: router.config.pools[0].endpoints (your model servers as ip:port); nats.mode=embedded with the relay sidecar on your model-server pods (add examples.sim.enabled=true for simulators that have it); inferencePool.enabled=true (members from the InferencePool)" -}}
{{- end -}}
{{- if .Values.inferencePool.enabled -}}
{{- $pools := default list $cfg.pools -}}
{{- if not $pools -}}
{{- fail "inferencePool.enabled: router.config.pools needs a pool to take the InferencePool's members" -}}
{{- end -}}
{{- $first := deepCopy (first $pools) -}}
{{- if $first.endpoints -}}
{{- fail "inferencePool.enabled: the InferencePool's ready pods are the first pool's endpoints; leave router.config.pools[0].endpoints empty" -}}
{{- end -}}
{{- $_ := set $first "inferencePool" (printf "%s/%s" .Release.Namespace (include "warmroute.inferencePoolName" .)) -}}
{{- $_ := set $cfg "pools" (prepend (rest $pools) $first) -}}
{{- end -}}
{{- $_ := set $cfg "grpcAddr" (printf ":%d" (int .Values.router.ports.grpc)) -}}
{{- $_ := set $cfg "adminAddr" (printf ":%d" (int .Values.router.ports.admin)) -}}
{{- with .Values.router.tls.existingSecret -}}
{{- $tls := default dict $cfg.tls -}}
{{- if or $tls.certFile $tls.keyFile -}}
{{- fail "set router.tls.existingSecret or router.config.tls.certFile/keyFile, not both" -}}
{{- end -}}
{{- $_ := set $tls "certFile" (printf "%s/tls.crt" (include "warmroute.tlsDir" $)) -}}
{{- $_ := set $tls "keyFile" (printf "%s/tls.key" (include "warmroute.tlsDir" $)) -}}
{{- $_ := unset $tls "selfSigned" -}}
{{- $_ := set $cfg "tls" $tls -}}
{{- end -}}
{{- if or .Values.inferencePool.enabled .Values.router.mtls.existingSecret -}}
{{- $tls := default dict $cfg.tls -}}
{{- if not $tls.certFile -}}{{- $_ := set $tls "selfSigned" true -}}{{- end -}}
{{- if .Values.router.mtls.existingSecret -}}
{{- $_ := set $tls "clientCAFile" (include "warmroute.mtlsCAPath" .) -}}
{{- end -}}
{{- $_ := set $cfg "tls" $tls -}}
{{- end -}}
{{- $events := deepCopy (default dict $cfg.events) -}}
{{- $url := include "warmroute.natsURL" . -}}
{{- if $url -}}
{{- $_ := set $events "url" $url -}}
{{- if include "warmroute.natsSecret" . -}}
{{- $_ := set $events "credsFile" (include "warmroute.natsCredsPath" .) -}}
{{- end -}}
{{- if include "warmroute.natsAuthSecret" . -}}
{{- $_ := set $events "nkeySeedFile" (printf "%s/router.nk" (include "warmroute.natsAuthDir" .)) -}}
{{- end -}}
{{- if and (eq .Values.nats.mode "embedded") .Values.nats.embedded.jetstream.enabled -}}
{{- $js := deepCopy (default dict $events.jetStream) -}}
{{- $_ := set $js "enabled" true -}}
{{- $_ := set $events "jetStream" $js -}}
{{- end -}}
{{- else -}}
{{/* Without NATS the router would start a private embedded server per pod
     that no relay reaches: turn event ingestion off instead. */}}
{{- $_ := set $events "disabled" true -}}
{{- end -}}
{{- $_ := set $cfg "events" $events -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* Where router.tls.existingSecret (the router's serving pair) is mounted. */}}
{{- define "warmroute.tlsDir" -}}/etc/warmroute/tls{{- end -}}

{{/* Where the mutual TLS Secret is mounted: the router's CA, Envoy's pair. */}}
{{- define "warmroute.mtlsCAPath" -}}/etc/warmroute/mtls/ca.crt{{- end -}}
{{- define "warmroute.mtlsEnvoyDir" -}}/etc/envoy/mtls{{- end -}}

{{/* True when the router serves gRPC with TLS (kubelet gRPC probes cannot). */}}
{{- define "warmroute.routerTLS" -}}
{{- $cfg := include "warmroute.serveConfig" . | fromYaml -}}
{{- if and $cfg.tls (or $cfg.tls.certFile $cfg.tls.selfSigned) -}}true{{- end -}}
{{- end -}}

{{- define "warmroute.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "warmroute.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* The InferencePool the router follows: inferencePool.name or the chart's own. */}}
{{- define "warmroute.inferencePoolName" -}}
{{- default (include "warmroute.fullname" .) .Values.inferencePool.name -}}
{{- end -}}

{{/* The embedded NATS authorization Secret (auth.conf, router.nk, relay.nk), or empty. */}}
{{- define "warmroute.natsAuthSecret" -}}
{{- if eq .Values.nats.mode "embedded" -}}{{- .Values.nats.embedded.auth.existingSecret -}}{{- end -}}
{{- end -}}
{{- define "warmroute.natsAuthDir" -}}/etc/warmroute/nats-auth{{- end -}}

{{/*
Non-empty when the router can learn model servers: static endpoints or a
pool's InferencePool in router.config, InferencePool mode, or relays that
announce endpoints over NATS. Rendering fails without any of them.
*/}}
{{- define "warmroute.learnsEndpoints" -}}
{{- $static := false -}}
{{- range (.Values.router.config.pools | default list) -}}
{{- if or .endpoints .inferencePool }}{{ $static = true }}{{ end -}}
{{- end -}}
{{- if or $static .Values.inferencePool.enabled (and (ne .Values.nats.mode "none") .Values.relay.enabled) -}}
yes
{{- end -}}
{{- end -}}
