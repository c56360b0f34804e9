{{/*
The gateway's certificates (templates/gateway.yaml), as YAML of a dict:
  mode:         generated, existingSecret or certManager
  secret:       the Secret of the serving certificate (tls.crt, tls.key; generated and existingSecret: client.* too)
  clientSecret: certManager: the Secret of the client certificate
  apiCa:        PEM the APIService trusts (caBundle; certManager: injected by cert-manager instead)
  agentCa:      PEM the agents trust the gateway's client certificate with (ConfigMap <gateway>-ca), or ""
  checksum:     what restarts the gateway when it changes
  generated: data (the Secret's data), names and notAfter (its annotations).
Generated: a CA, a serving and a client certificate made at the first install and looked up and kept at each
upgrade while the Secret names the same host and has more than 30 days left; where lookup finds nothing (helm
template, --dry-run, lint) new ones are made. Only upgrades look up what the chart made (an install has nothing
to find), so a render that is an install needs no cluster.
*/}}
{{- define "drover.gatewayTls" -}}
{{- $name := include "drover.gatewayName" . }}
{{- $ns := include "drover.namespace" . }}
{{- $t := .Values.gateway.tls }}
{{- $host := printf "%s.%s.svc" $name $ns }}
{{- $out := dict "secret" (printf "%s-tls" $name) "clientSecret" "" "agentCa" "" "apiCa" "" }}
{{- if and $t.existingSecret $t.certManager.enabled }}
{{- fail "gateway.tls.existingSecret and gateway.tls.certManager.enabled are both set: the gateway's certificates come from one of them; unset the other" }}
{{- end }}
{{- if $t.existingSecret }}
{{- $_ := set $out "mode" "existingSecret" }}
{{- $_ := set $out "secret" $t.existingSecret }}
{{- $ca := $t.caBundle }}
{{- if not $ca }}
{{- $found := lookup "v1" "Secret" $ns $t.existingSecret }}
{{- $ca = get (get (default dict $found) "data" | default dict) "ca.crt" | default "" | b64dec }}
{{- end }}
{{- if not $ca }}
{{- fail (printf "gateway.tls.existingSecret names Secret %s, and neither gateway.tls.caBundle nor a ca.crt in that Secret (in namespace %s; helm template cannot read it) gives the CA that signed its tls.crt and client.crt: give gateway.tls.caBundle" $t.existingSecret $ns) }}
{{- end }}
{{- $_ := set $out "apiCa" $ca }}
{{- $_ := set $out "agentCa" $ca }}
{{- $_ := set $out "checksum" $ca }}
{{- else if $t.certManager.enabled }}
{{- $_ := set $out "mode" "certManager" }}
{{- $_ := set $out "clientSecret" (printf "%s-client" $name) }}
{{- $ca := $t.caBundle }}
{{- if and (not $ca) .Release.IsUpgrade }}
{{- $found := lookup "v1" "Secret" $ns (printf "%s-client" $name) }}
{{- $ca = get (get (default dict $found) "data" | default dict) "ca.crt" | default "" | b64dec }}
{{- end }}
{{- $_ := set $out "agentCa" $ca }}
{{- $_ := set $out "checksum" (printf "cert-manager %s" $ca) }}
{{- $_ := set $out "host" $host }}
{{- else }}
{{- $_ := set $out "mode" "generated" }}
{{- $names := list $host (printf "%s.cluster.local" $host) }}
{{- $_ := set $out "names" (join "," $names) }}
{{- $now := int64 (now | unixEpoch) }}
{{- $old := dict }}
{{- if .Release.IsUpgrade }}
{{- $old = lookup "v1" "Secret" $ns (printf "%s-tls" $name) | default dict }}
{{- end }}
{{- $oldData := get $old "data" | default dict }}
{{- $oldNotes := get (get $old "metadata" | default dict) "annotations" | default dict }}
{{- $complete := true }}
{{- range list "ca.crt" "tls.crt" "tls.key" "client.crt" "client.key" }}
{{- if not (get $oldData .) }}{{ $complete = false }}{{ end }}
{{- end }}
{{- $left := sub (int64 (get $oldNotes "drover.dev/tls-not-after" | default "0")) $now }}
{{- if and $complete (eq (get $oldNotes "drover.dev/tls-names") (join "," $names)) (gt $left (mul 30 86400)) }}
{{- $_ := set $out "data" (pick $oldData "ca.crt" "tls.crt" "tls.key" "client.crt" "client.key") }}
{{- $_ := set $out "notAfter" (get $oldNotes "drover.dev/tls-not-after") }}
{{- $_ := set $out "apiCa" (b64dec (get $oldData "ca.crt")) }}
{{- $_ := set $out "agentCa" (b64dec (get $oldData "ca.crt")) }}
{{- else }}
{{- $ca := genCA (printf "%s-ca" $name) 3650 }}
{{- $cert := genSignedCert $host nil $names 3650 $ca }}
{{- /* The gateway's client certificate for agents, from the same CA (sprig's certificates are for server and
client authentication): the agents read the CA from the ConfigMap and take the gateway's token only with it. */}}
{{- $client := genSignedCert "drover-gateway" nil nil 3650 $ca }}
{{- $_ := set $out "data" (dict "ca.crt" ($ca.Cert | b64enc) "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) "client.crt" ($client.Cert | b64enc) "client.key" ($client.Key | b64enc)) }}
{{- $_ := set $out "notAfter" (printf "%d" (add $now (mul 3650 86400))) }}
{{- $_ := set $out "apiCa" $ca.Cert }}
{{- /* A CA that replaces one in the cluster: the agents trust both until the next upgrade, so the restarted
gateway is not refused while the kubelet has not yet updated their ConfigMap. */}}
{{- $oldCa := get $oldData "ca.crt" | default "" | b64dec }}
{{- if and (not $oldCa) .Release.IsUpgrade }}
{{- /* a Secret of a chart that kept no ca.crt in it: the agents' ConfigMap has the CA */}}
{{- $oldCm := lookup "v1" "ConfigMap" $ns (printf "%s-ca" $name) | default dict }}
{{- $oldCa = get (get $oldCm "data" | default dict) "ca.crt" | default "" }}
{{- end }}
{{- $_ := set $out "agentCa" (printf "%s\n%s" (trim $ca.Cert) (trim $oldCa) | trim) }}
{{- end }}
{{- $_ := set $out "checksum" (get $out.data "tls.crt") }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
cert-manager (gateway.tls.certManager.enabled): the serving certificate (Secret <gateway>-tls, whose CA cert-manager
injects into the APIService) and the client certificate for agents (Secret <gateway>-client), from
gateway.tls.certManager.issuerRef or, without one, from a CA of the chart's own: a self-signed Issuer, a CA
Certificate <gateway>-ca and an Issuer <gateway>-ca of it. Call with (dict "ctx" $ "tls" <drover.gatewayTls>).
*/}}
{{- define "drover.gatewayCertificates" -}}
{{- $ctx := .ctx }}
{{- $name := include "drover.gatewayName" $ctx }}
{{- $cm := $ctx.Values.gateway.tls.certManager }}
{{- $issuer := $cm.issuerRef }}
{{- if not $issuer.name }}
{{- $issuer = dict "name" (printf "%s-ca" $name) "kind" "Issuer" "group" "cert-manager.io" }}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {{ $name }}-selfsigned
  namespace: {{ include "drover.namespace" $ctx }}
  labels:
    {{- include "drover.labels" (dict "ctx" $ctx "component" "gateway") | nindent 4 }}
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ $name }}-ca
  namespace: {{ include "drover.namespace" $ctx }}
  labels:
    {{- include "drover.labels" (dict "ctx" $ctx "component" "gateway") | nindent 4 }}
spec:
  isCA: true
  commonName: {{ $name }}-ca
  secretName: {{ $name }}-ca
  duration: {{ $cm.caDuration }}
  privateKey:
    algorithm: ECDSA
    size: 256
  issuerRef:
    name: {{ $name }}-selfsigned
    kind: Issuer
    group: cert-manager.io
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {{ $name }}-ca
  namespace: {{ include "drover.namespace" $ctx }}
  labels:
    {{- include "drover.labels" (dict "ctx" $ctx "component" "gateway") | nindent 4 }}
spec:
  ca:
    secretName: {{ $name }}-ca
{{- end }}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .tls.secret }}
  namespace: {{ include "drover.namespace" $ctx }}
  labels:
    {{- include "drover.labels" (dict "ctx" $ctx "component" "gateway") | nindent 4 }}
spec:
  secretName: {{ .tls.secret }}
  dnsNames:
    - {{ .tls.host }}
    - {{ .tls.host }}.cluster.local
  duration: {{ $cm.duration }}
  renewBefore: {{ $cm.renewBefore }}
  usages: ["server auth", "digital signature", "key encipherment"]
  issuerRef:
    {{- toYaml $issuer | nindent 4 }}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ .tls.clientSecret }}
  namespace: {{ include "drover.namespace" $ctx }}
  labels:
    {{- include "drover.labels" (dict "ctx" $ctx "component" "gateway") | nindent 4 }}
spec:
  secretName: {{ .tls.clientSecret }}
  commonName: drover-gateway
  duration: {{ $cm.duration }}
  renewBefore: {{ $cm.renewBefore }}
  usages: ["client auth", "digital signature", "key encipherment"]
  issuerRef:
    {{- toYaml $issuer | nindent 4 }}
{{- end }}
