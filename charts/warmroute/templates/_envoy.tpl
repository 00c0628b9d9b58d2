{{/*
Envoy's bootstrap: the ext_proc filter in front of the model servers'
cluster (ORIGINAL_DST on the destination header the router sets, or, with
fallbacks, the override_host policy over known endpoints). The same
structure as e2e/envoy/standalone.yaml and fallbacks.yaml, which explain
each setting.
*/}}
{{- define "warmroute.envoyConfig" -}}
{{- $e := .Values.envoy -}}
{{- if not (has $e.requestBodyMode (list "FULL_DUPLEX_STREAMED" "BUFFERED")) -}}
{{- fail "envoy.requestBodyMode must be FULL_DUPLEX_STREAMED or BUFFERED" -}}
{{- end -}}
admin:
  address:
    socket_address: { address: 127.0.0.1, port_value: {{ $e.adminPort }} }
overload_manager:
  resource_monitors:
  - name: envoy.resource_monitors.global_downstream_max_connections
    typed_config:
      "@type": type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig
      max_active_downstream_connections: {{ $e.maxConnections }}
static_resources:
  listeners:
  - name: llm
    address:
      socket_address: { address: 0.0.0.0, port_value: {{ $e.port }} }
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          stat_prefix: llm
          stream_idle_timeout: {{ $e.streamIdleTimeout }}
          route_config:
            name: llm
            virtual_hosts:
            - name: llm
              domains: ["*"]
              request_body_buffer_limit: {{ int64 $e.bufferLimitBytes }}
              routes:
              - match: { prefix: "/" }
                route:
                  cluster: model_servers
                  timeout: {{ $e.routeTimeout }}
                  {{- $fallbacks := int (default 0 .Values.router.config.fallbacks) }}
                  {{- if gt $fallbacks 0 }}
                  # One retry per fallback, before any response byte: the
                  # override_host policy sends each retry to the next
                  # endpoint of the router's list.
                  retry_policy:
                    retry_on: connect-failure,refused-stream,reset
                    num_retries: {{ $fallbacks }}
                  {{- end }}
                # The endpoint that really served, for the router (which
                # keeps it from the client); overwritten, never the engine's.
                response_headers_to_add:
                - header: { key: x-gateway-destination-endpoint-served, value: "%UPSTREAM_REMOTE_ADDRESS%" }
                  append_action: OVERWRITE_IF_EXISTS_OR_ADD
          http_filters:
          # Clients must not choose their own destination: the model
          # servers' cluster trusts this header, and the router sets it again.
          - name: envoy.filters.http.header_mutation
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation
              mutations:
                request_mutations:
                - remove: {{ $e.destinationHeader }}
          # The readiness probe's path, answered by Envoy itself: it fails
          # once the preStop hook has failed Envoy's health check, so the
          # Service stops sending while open streams finish.
          - name: envoy.filters.http.health_check
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck
              pass_through_mode: false
              headers:
              - name: ":path"
                string_match: { exact: {{ include "warmroute.envoyHealthPath" . }} }
          - name: envoy.filters.http.ext_proc
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor
              grpc_service:
                envoy_grpc: { cluster_name: warmroute }
              failure_mode_allow: {{ $e.failOpen }}
              status_on_error: { code: ServiceUnavailable }
              processing_mode:
                request_header_mode: SEND
                request_body_mode: {{ $e.requestBodyMode }}
                request_trailer_mode: {{ if eq $e.requestBodyMode "FULL_DUPLEX_STREAMED" }}SEND{{ else }}SKIP{{ end }}
                response_header_mode: SEND
                # STREAMED lets the router read usage (cached_tokens) and keep
                # its load accounting until the response's last byte.
                response_body_mode: STREAMED
                response_trailer_mode: SKIP
              allow_mode_override: false
              message_timeout: {{ $e.messageTimeout }}
              metadata_options:
                forwarding_namespaces:
                  untyped: ["envoy.lb.subset_hint"]
                receiving_namespaces:
                  untyped: ["envoy.lb"]
          - name: envoy.filters.http.router
            typed_config:
              "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
  clusters:
  {{ include "warmroute.modelServersCluster" . | trim }}
  - name: warmroute
    {{- if eq $e.mode "sidecar" }}
    type: STATIC
    {{- else }}
    # Every router pod, from the headless Service.
    type: STRICT_DNS
    dns_lookup_family: V4_PREFERRED
    lb_policy: LEAST_REQUEST
    {{- end }}
    connect_timeout: 1s
    typed_extension_protocol_options:
      envoy.extensions.upstreams.http.v3.HttpProtocolOptions:
        "@type": type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions
        explicit_http_config:
          http2_protocol_options:
            connection_keepalive: { interval: 10s, timeout: 5s }
    {{- if include "warmroute.routerTLS" . }}
    transport_socket:
      name: envoy.transport_sockets.tls
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext
        common_tls_context:
          alpn_protocols: ["h2"]
          {{- if .Values.router.mtls.existingSecret }}
          # Mutual TLS: the router requires this certificate (router.mtls).
          tls_certificates:
          - certificate_chain: { filename: {{ include "warmroute.mtlsEnvoyDir" . }}/tls.crt }
            private_key: { filename: {{ include "warmroute.mtlsEnvoyDir" . }}/tls.key }
          {{- end }}
    {{- end }}
    per_connection_buffer_limit_bytes: {{ int64 $e.bufferLimitBytes }}
    load_assignment:
      cluster_name: warmroute
      endpoints:
      - lb_endpoints:
        - endpoint:
            address:
              socket_address:
                {{- if eq $e.mode "sidecar" }}
                address: 127.0.0.1
                {{- else }}
                address: {{ include "warmroute.fullname" . }}-headless.{{ .Release.Namespace }}.svc
                {{- end }}
                port_value: {{ .Values.router.ports.grpc }}
{{- end -}}

{{- define "warmroute.envoyContainer" -}}
- name: envoy
  image: {{ include "warmroute.imageRef" (dict "image" .Values.envoy.image) }}
  imagePullPolicy: {{ .Values.envoy.image.pullPolicy }}
  command: [envoy]
  args:
    - --config-path
    - /etc/envoy/envoy.yaml
    # No shared memory for hot restart: the root filesystem is read-only and
    # Kubernetes restarts by replacing pods.
    - --disable-hot-restart
    - --log-level
    - info
  ports:
    - name: http
      containerPort: {{ .Values.envoy.port }}
  readinessProbe:
    httpGet: { path: {{ include "warmroute.envoyHealthPath" . }}, port: http }
    periodSeconds: 5
  livenessProbe:
    tcpSocket: { port: http }
    periodSeconds: 10
  {{- if gt (int .Values.router.drainSeconds) 0 }}
  lifecycle:
    preStop:
      exec:
        command: [/bin/bash, -c, {{ include "warmroute.envoyDrainScript" . | quote }}]
  {{- end }}
  resources:
    {{- toYaml .Values.envoy.resources | nindent 4 }}
  securityContext:
    {{- include "warmroute.containerSecurityContext" . | nindent 4 }}
  volumeMounts:
    - { name: envoy-config, mountPath: /etc/envoy, readOnly: true }
    - { name: envoy-tmp, mountPath: /tmp }
    {{- if .Values.router.mtls.existingSecret }}
    - { name: envoy-mtls, mountPath: {{ include "warmroute.mtlsEnvoyDir" . }}, readOnly: true }
    {{- end }}
{{- end -}}

{{- define "warmroute.envoyVolumes" -}}
- name: envoy-config
  configMap:
    name: {{ include "warmroute.fullname" . }}-envoy
- name: envoy-tmp
  emptyDir: {}
{{- with .Values.router.mtls.existingSecret }}
- name: envoy-mtls
  secret:
    secretName: {{ . }}
    defaultMode: 0440
    # Envoy's pair only: the CA stays with the router.
    items: [{ key: tls.crt, path: tls.crt }, { key: tls.key, path: tls.key }]
{{- end }}
{{- end -}}


{{/* Envoy's health check path (the health_check filter answers it). */}}
{{- define "warmroute.envoyHealthPath" -}}/healthz/envoy{{- end -}}

{{/*
The preStop drain: fail Envoy's health check through its loopback admin API
(POST /healthcheck/fail: readiness fails, and Envoy closes client connections
after their current request), then wait router.drainSeconds for open
streams before the kubelet sends SIGTERM, on which Envoy exits. Bash's
/dev/tcp needs no curl in the image (the default envoyproxy/envoy image is
Ubuntu with bash; a distroless Envoy needs router.drainSeconds: 0).
*/}}
{{- define "warmroute.envoyDrainScript" -}}
{{- printf "exec 3<>/dev/tcp/127.0.0.1/%d && printf 'POST /healthcheck/fail HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n' >&3 && read -r -t 5 status <&3; exec 3<&-; sleep %d" (int .Values.envoy.adminPort) (int .Values.router.drainSeconds) -}}
{{- end -}}


{{/*
The model servers' cluster. Without fallbacks: ORIGINAL_DST on the
destination header (any endpoint the router names). With
router.config.fallbacks > 0 Envoy must know the endpoints, so that its
override_host policy can read the router's whole list (primary, then
fallbacks) and send each retry to the next: a STRICT_DNS cluster on
envoy.modelServers.dnsName (a headless Service of the model-server pods) or
the example simulators' headless Service, else a STATIC cluster of the
pools' static endpoints. Rendering fails when none is known.
*/}}
{{- define "warmroute.modelServersCluster" -}}
{{- $e := .Values.envoy -}}
{{- $fallbacks := int (default 0 .Values.router.config.fallbacks) -}}
{{- if eq $fallbacks 0 -}}
  - name: model_servers
    type: ORIGINAL_DST
    lb_policy: CLUSTER_PROVIDED
    connect_timeout: {{ $e.connectTimeout }}
    original_dst_lb_config:
      use_http_header: true
      http_header_name: {{ $e.destinationHeader }}
    cleanup_interval: 60s
    per_connection_buffer_limit_bytes: {{ int64 $e.bufferLimitBytes }}
{{- else -}}
{{- $dns := $e.modelServers.dnsName -}}
{{- $port := int $e.modelServers.port -}}
{{- if and (not $dns) .Values.examples.sim.enabled -}}
{{- $dns = printf "%s-sim.%s.svc.cluster.local" (include "warmroute.fullname" .) .Release.Namespace -}}
{{- $port = int .Values.relay.enginePort -}}
{{- end -}}
{{- $static := list -}}
{{- range .Values.router.config.pools -}}
{{- range (default list .endpoints) -}}
{{- $parts := splitList ":" . -}}
{{- if ne (len $parts) 2 -}}
{{- fail (printf "router.config.fallbacks with the chart's Envoy: endpoint %q must be IPv4:port for a STATIC cluster; set envoy.modelServers.dnsName instead" .) -}}
{{- end -}}
{{- $static = append $static $parts -}}
{{- end -}}
{{- end -}}
{{- if and (not $dns) (not $static) -}}
{{- fail "router.config.fallbacks > 0 with the chart's Envoy: Envoy must know the model servers to retry on a fallback. Set envoy.modelServers.dnsName (and .port) to a headless Service of the model-server pods, or list static router.config.pools[].endpoints, or enable examples.sim; or set fallbacks to 0, or envoy.mode=none behind a gateway that reads the endpoint list" -}}
{{- end -}}
  - name: model_servers
    {{- if $dns }}
    # Every model-server pod, from DNS (a headless Service's records).
    type: STRICT_DNS
    dns_lookup_family: V4_PREFERRED
    dns_refresh_rate: 5s
    {{- else }}
    type: STATIC
    {{- end }}
    connect_timeout: {{ $e.connectTimeout }}
    per_connection_buffer_limit_bytes: {{ int64 $e.bufferLimitBytes }}
    load_balancing_policy:
      policies:
      - typed_extension_config:
          name: envoy.load_balancing_policies.override_host
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.load_balancing_policies.override_host.v3.OverrideHost
            override_host_sources:
            - metadata: { key: envoy.lb, path: [ { key: {{ $e.destinationHeader }} } ] }
            - header: {{ $e.destinationHeader }}
            selected_host_key: { key: envoy.lb, path: [ { key: {{ $e.destinationHeader }}-served } ] }
            # Used only when the list names no endpoint Envoy knows.
            fallback_policy:
              policies:
              - typed_extension_config:
                  name: envoy.load_balancing_policies.round_robin
                  typed_config:
                    "@type": type.googleapis.com/envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin
    load_assignment:
      cluster_name: model_servers
      endpoints:
      - lb_endpoints:
        {{- if $dns }}
        - endpoint:
            address:
              socket_address: { address: {{ $dns }}, port_value: {{ $port }} }
        {{- else }}
        {{- range $static }}
        - endpoint:
            address:
              socket_address: { address: {{ index . 0 }}, port_value: {{ index . 1 }} }
        {{- end }}
        {{- end }}
{{- end -}}
{{- end -}}
