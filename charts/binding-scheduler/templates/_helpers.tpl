{{/* The release's full name: <release>, or <release>-binding-scheduler when the release name lacks it. */}}
{{- define "binding-scheduler.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "binding-scheduler.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "binding-scheduler.labels" -}}
{{ include "binding-scheduler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "binding-scheduler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "binding-scheduler.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "binding-scheduler.configName" -}}
{{- default (include "binding-scheduler.fullname" .) .Values.configuration.name -}}
{{- end -}}

{{/* object or file: where the scheduler reads its SchedulerConfiguration. */}}
{{- define "binding-scheduler.configSource" -}}
{{- $source := .Values.configuration.source -}}
{{- if not $source -}}
{{- $source = ternary "object" "file" (eq .Values.karmadaAPI.mode "inCluster") -}}
{{- end -}}
{{- if and (eq $source "object") (ne .Values.karmadaAPI.mode "inCluster") -}}
{{- fail "configuration.source=object needs karmadaAPI.mode=inCluster: the object would be created in this cluster, but the scheduler reads the Karmada API server; use configuration.source=file" -}}
{{- end -}}
{{- $source -}}
{{- end -}}

{{/*
The SchedulerConfiguration spec: .Values.config with karmada-system as the default namespace of the Lease and of
the estimator Services, whatever the release namespace: both are looked up in the Karmada API server, where
Karmada keeps them in karmada-system (its scheduler's Lease, its estimators' Services). Rendered as YAML.
*/}}
{{- define "binding-scheduler.configSpec" -}}
{{- $spec := deepCopy (.Values.config | default dict) -}}
{{- $election := get $spec "leaderElection" | default dict -}}
{{- if not (hasKey $election "leaseNamespace") -}}
{{- $_ := set $election "leaseNamespace" "karmada-system" -}}
{{- end -}}
{{- $_ := set $spec "leaderElection" $election -}}
{{- $estimator := get $spec "estimator" | default dict -}}
{{- $service := get $estimator "service" | default dict -}}
{{- if not (hasKey $service "namespace") -}}
{{- $_ := set $service "namespace" "karmada-system" -}}
{{- end -}}
{{- $_ := set $estimator "service" $service -}}
{{- $_ := set $spec "estimator" $estimator -}}
{{- toYaml $spec -}}
{{- end -}}

{{/* A Go duration string ("5s", "1m30s", "500ms", "0") as seconds; fails naming `what` otherwise. */}}
{{- define "binding-scheduler.seconds" -}}
{{- $value := toString .value -}}
{{- $unit := "[0-9]*\\.?[0-9]+(ns|us|µs|ms|s|m|h)" -}}
{{- if not (or (eq $value "0") (regexMatch (printf "^(%s)+$" $unit) $value)) -}}
{{- fail (printf "%s: %q is not a duration (like 5s, 1m30s or 500ms)" .what $value) -}}
{{- end -}}
{{- $scale := dict "ns" 0.000000001 "us" 0.000001 "µs" 0.000001 "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- $total := 0.0 -}}
{{- range regexFindAll $unit $value -1 -}}
{{- $number := regexFind "^[0-9]*\\.?[0-9]+" . -}}
{{- $total = addf $total (mulf (float64 $number) (get $scale (trimPrefix $number .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* terminationGracePeriodSeconds: the drain timeout rounded up plus the margin, or the value given. A stop takes
at most the drain timeout plus 4 s (the drained passes' Events, the Lease release and closing, whatever the API
server does) plus up to 2 s to exit: a grace period shorter than that would let the kubelet kill it. */}}
{{- define "binding-scheduler.gracePeriod" -}}
{{- $shutdown := get (.Values.config | default dict) "shutdown" | default dict -}}
{{- $drainText := get $shutdown "drainTimeout" | default "5s" -}}
{{- $drain := include "binding-scheduler.seconds" (dict "value" $drainText "what" "config.shutdown.drainTimeout") | float64 -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- add (ceil $drain | int) .Values.terminationGracePeriodMarginSeconds -}}
{{- else -}}
{{- $grace := .Values.terminationGracePeriodSeconds | int -}}
{{- if lt (float64 $grace) (addf $drain 6.0) -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be at least config.shutdown.drainTimeout (%s) + 6 s (4 s for the Events, the Lease release and closing after the drain, 2 s to exit): the kubelet would kill the scheduler while it stops" $grace $drainText) -}}
{{- end -}}
{{- $grace -}}
{{- end -}}
{{- end -}}

{{/* The ports of the scheduler's servers (spec.metrics.port / healthPort; 0 disables a server). */}}
{{- define "binding-scheduler.metricsPort" -}}
{{- $metrics := get (.Values.config | default dict) "metrics" | default dict -}}
{{- if hasKey $metrics "port" }}{{ $metrics.port | int }}{{ else }}8080{{ end -}}
{{- end -}}

{{- define "binding-scheduler.healthPort" -}}
{{- $metrics := get (.Values.config | default dict) "metrics" | default dict -}}
{{- $port := 10351 -}}
{{- if hasKey $metrics "healthPort" }}{{ $port = $metrics.healthPort | int }}{{ end -}}
{{- if eq $port 0 -}}
{{- fail "config.metrics.healthPort must not be 0 in the chart: the liveness, readiness and startup probes use it" -}}
{{- end -}}
{{- $port -}}
{{- end -}}

{{/*
The value Karmada's flag `name` has in extraArgs, read as the scheduler reads it (Go's flag syntax: `--name=value`
or `-name=value`, and `--name value` for a flag that is not `boolean`; a bare boolean is true; the last one
wins). "" when extraArgs does not give it; a boolean's value is "true" or "false" (Go's strconv.ParseBool
spellings), and any other value fails the render naming the flag.
*/}}
{{- define "binding-scheduler.flag" -}}
{{- $args := .args | default list -}}
{{- $value := "" -}}
{{- range $index, $arg := $args -}}
{{- $text := regexReplaceAll "^--?" (toString $arg) "" -}}
{{- if hasPrefix (printf "%s=" $.name) $text -}}
{{- $value = trimPrefix (printf "%s=" $.name) $text -}}
{{- else if eq $text $.name -}}
{{- if $.boolean -}}
{{- $value = "true" -}}
{{- else if lt (add1 $index) (len $args) -}}
{{- $value = toString (index $args (add1 $index)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .boolean (ne $value "") -}}
{{- if has $value (list "1" "t" "T" "TRUE" "true" "True") -}}true
{{- else if has $value (list "0" "f" "F" "FALSE" "false" "False") -}}false
{{- else -}}{{- fail (printf "extraArgs: --%s=%s is not a boolean (true or false)" .name $value) -}}
{{- end -}}
{{- else -}}{{- $value -}}
{{- end -}}
{{- end -}}

{{/* Whether the scheduler asks the accurate estimators: Karmada's flag in extraArgs, else the config. */}}
{{- define "binding-scheduler.estimatorEnabled" -}}
{{- $estimator := get (.Values.config | default dict) "estimator" | default dict -}}
{{- $flag := include "binding-scheduler.flag" (dict "args" .Values.extraArgs "name" "enable-scheduler-estimator" "boolean" true) -}}
{{- if eq $flag "true" }}true{{ else if and (ne $flag "false") (get $estimator "enabled") }}true{{ end -}}
{{- end -}}

{{/* Whether the scheduler elects a leader: Karmada's --leader-elect in extraArgs, else the config. */}}
{{- define "binding-scheduler.leaderElection" -}}
{{- $election := get (.Values.config | default dict) "leaderElection" | default dict -}}
{{- $flag := include "binding-scheduler.flag" (dict "args" .Values.extraArgs "name" "leader-elect" "boolean" true) -}}
{{- if eq $flag "true" }}true{{ else if and (ne $flag "false") (or (not (hasKey $election "enabled")) $election.enabled) }}true{{ end -}}
{{- end -}}

{{/*
The namespaces the scheduler's Roles must be in, as the scheduler will run: the Lease's and the estimator
Services', from Karmada's flags in extraArgs when given there (they win over the configuration), else from the
configuration (karmada-system by default). Rendered as YAML: {lease: NS, estimators: NS}.
*/}}
{{- define "binding-scheduler.roleNamespaces" -}}
{{- $spec := include "binding-scheduler.configSpec" . | fromYaml -}}
{{- $lease := include "binding-scheduler.flag" (dict "args" .Values.extraArgs "name" "leader-elect-resource-namespace") | default $spec.leaderElection.leaseNamespace -}}
{{- $estimators := include "binding-scheduler.flag" (dict "args" .Values.extraArgs "name" "scheduler-estimator-service-namespace") | default $spec.estimator.service.namespace -}}
{{- toYaml (dict "lease" $lease "estimators" $estimators) -}}
{{- end -}}

{{/*
The Secrets the Karmada install named by karmadaAPI.layout creates for its karmada-scheduler, in its namespace:
the kubeconfig for karmada-apiserver, and the client certificate towards the scheduler estimators. A name or key
given in the values wins over the layout's. Rendered as YAML:
{kubeconfig: {name, key}, estimatorClientCertificate: {secretName, ca, cert, key}}.
*/}}
{{- define "binding-scheduler.karmadaSecrets" -}}
{{- $api := .Values.karmadaAPI -}}
{{- $kubeconfig := dict "key" "karmada.config" -}}
{{- $client := dict "ca" "ca.crt" "cert" "karmada.crt" "key" "karmada.key" -}}
{{- if eq $api.layout "local-up" -}}
{{- $_ := set $kubeconfig "name" "karmada-scheduler-config" -}}
{{- $client = dict "secretName" "karmada-scheduler-scheduler-estimator-client-cert" "ca" "ca.crt" "cert" "tls.crt" "key" "tls.key" -}}
{{- else if eq $api.layout "karmadactl-init" -}}
{{- $_ := set $kubeconfig "name" "karmada-scheduler-config" -}}
{{- $_ := set $client "secretName" "karmada-cert" -}}
{{- else if eq $api.layout "helm" -}}
{{- $release := required "karmadaAPI.helm.releaseName: the release name of Karmada's chart is required with karmadaAPI.layout=helm" $api.helm.releaseName -}}
{{- $kubeconfig = dict "name" (printf "%s-kubeconfig" $release) "key" "kubeconfig" -}}
{{- $_ := set $client "secretName" (printf "%s-cert" $release) -}}
{{- $_ := set $client "ca" "server-ca.crt" -}}
{{- else if eq $api.layout "operator" -}}
{{- $instance := required "karmadaAPI.operator.instanceName: the name of the Karmada object is required with karmadaAPI.layout=operator" $api.operator.instanceName -}}
{{- /* The operator names an instance's objects <instance>-<suffix> when the name contains "karmada", else <instance>-karmada-<suffix>. */ -}}
{{- $prefix := ternary $instance (printf "%s-karmada" $instance) (contains "karmada" $instance) -}}
{{- $_ := set $kubeconfig "name" (printf "%s-scheduler-config" $prefix) -}}
{{- $_ := set $client "secretName" (printf "%s-cert" $prefix) -}}
{{- else -}}
{{- fail (printf "karmadaAPI.layout: %q is not one of local-up, karmadactl-init, helm, operator" (toString $api.layout)) -}}
{{- end -}}
{{- range $field, $value := $api.kubeconfigSecret | default dict -}}
{{- if $value }}{{ $_ := set $kubeconfig $field $value }}{{ end -}}
{{- end -}}
{{- $given := $api.estimatorClientCertificate | default dict -}}
{{- with $given.secretName }}{{ $_ := set $client "secretName" . }}{{ end -}}
{{- range $field, $value := $given.keys | default dict -}}
{{- if $value }}{{ $_ := set $client $field $value }}{{ end -}}
{{- end -}}
{{- toYaml (dict "kubeconfig" $kubeconfig "estimatorClientCertificate" $client) -}}
{{- end -}}

{{/*
Whether the pods mount the estimator client certificate and pass it as Karmada's --scheduler-estimator-*-file
flags: with a kubeconfig Secret (a Karmada install beside the chart), when the scheduler asks the estimators and
karmadaAPI.estimatorClientCertificate.enabled. Those flags would win over config.estimator.tls's files, so
giving both fails the render.
*/}}
{{- define "binding-scheduler.estimatorClientCertificate" -}}
{{- $wanted := (.Values.karmadaAPI.estimatorClientCertificate | default dict).enabled -}}
{{- if and (eq .Values.karmadaAPI.mode "kubeconfigSecret") (eq (include "binding-scheduler.estimatorEnabled" .) "true") $wanted -}}
{{- $tls := get (get (.Values.config | default dict) "estimator" | default dict) "tls" | default dict -}}
{{- range $field := list "caFile" "certFile" "keyFile" -}}
{{- if get $tls $field -}}
{{- fail (printf "config.estimator.tls.%s is set, but the chart passes the client certificate of karmadaAPI.estimatorClientCertificate as Karmada's --scheduler-estimator-*-file flags, which win over it: drop it, or set karmadaAPI.estimatorClientCertificate.enabled=false" $field) -}}
{{- end -}}
{{- end -}}
true
{{- end -}}
{{- end -}}
