{{/*
The alert rules of docs/monitoring.md (each with its runbook there), as the groups of a
Prometheus rules file. Used by prometheusrule.yaml and rendered into
deploy/monitoring/oncestream-alerts.yaml for a Prometheus without the Prometheus Operator.
Every alert has a promtool unit test in deploy/monitoring/oncestream-alerts.test.yaml.
*/}}
{{- define "oncestream.alertRules" -}}
{{- $r := .Values.metrics.prometheusRule -}}
groups:
  - name: oncestream.jobs
    rules:
      - alert: OncestreamJobLagging
        expr: max by (job_id) (oncestream_job_lag_seconds) > {{ $r.lagSeconds }}
        for: {{ $r.lagFor }}
        labels:
          severity: warning
        annotations:
          summary: "StreamJob {{"{{"}} $labels.job_id {{"}}"}} is {{"{{"}} $value | humanizeDuration {{"}}"}} behind Kafka"
          description: "The oldest record the job has not committed is older than {{ $r.lagSeconds }} s and has been for {{ $r.lagFor }}: the job does not keep up with its topics."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamjoblagging"
      - alert: OncestreamLagGrowingWhileSinkDown
        # Growing: above its lowest of the last 5 minutes (min_over_time skips the NaN a job has
        # before its first report, where delta() would be NaN).
        expr: (max by (job_id) (oncestream_job_sink_available) == 0) and (max by (job_id) (oncestream_job_lag_records) > max by (job_id) (min_over_time(oncestream_job_lag_records[5m])))
        for: {{ $r.unavailableFor }}
        labels:
          severity: critical
        annotations:
          summary: "StreamJob {{"{{"}} $labels.job_id {{"}}"}} cannot write to Cassandra and falls behind"
          description: "Cassandra refuses or does not answer the job's writes while records keep arriving: nothing is committed, the lag grows. The job retries by itself and loses nothing."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamlaggrowingwhilesinkdown"
      - alert: OncestreamSinkUnavailable
        expr: max by (job_id) (oncestream_job_sink_available) == 0
        for: {{ $r.unavailableFor }}
        labels:
          severity: warning
        annotations:
          summary: "StreamJob {{"{{"}} $labels.job_id {{"}}"}} cannot write to Cassandra"
          description: "A worker of the job retries its writes; nothing is committed meanwhile. The job's SinkAvailable condition names the worker and the driver's error."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamsinkunavailable"
      - alert: OncestreamSourceUnavailable
        expr: max by (job_id) (oncestream_job_source_available) == 0
        for: {{ $r.unavailableFor }}
        labels:
          severity: warning
        annotations:
          summary: "StreamJob {{"{{"}} $labels.job_id {{"}}"}} cannot reach Kafka"
          description: "The job's workers get no answer from Kafka; they retry by themselves. The job's SourceAvailable condition names the worker and the error."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamsourceunavailable"
      - alert: OncestreamJobFailed
        expr: max by (job_id) (oncestream_job_phase{phase="Failed"}) == 1
        for: 1m
        labels:
          severity: critical
        annotations:
          summary: "StreamJob {{"{{"}} $labels.job_id {{"}}"}} failed"
          description: "The job's spec is invalid or a worker failed permanently (Stalled=True): only a change of the spec or of the data helps. kubectl describe sj names the field or the record."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamjobfailed"
      - alert: OncestreamJobDegraded
        expr: max by (job_id) (oncestream_job_phase{phase="Degraded"}) == 1
        for: {{ $r.degradedFor }}
        labels:
          severity: warning
        annotations:
          summary: "StreamJob {{"{{"}} $labels.job_id {{"}}"}} has been Degraded for {{ $r.degradedFor }}"
          description: "A worker is not ready or not reachable, or Cassandra or Kafka fails, and it has not recovered by itself."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamjobdegraded"
      - alert: OncestreamWorkerCrashLooping
        expr: max by (job_id) (increase(oncestream_job_worker_restarts[15m])) > {{ $r.restartsIn15m }}
        labels:
          severity: warning
        annotations:
          summary: "Workers of StreamJob {{"{{"}} $labels.job_id {{"}}"}} restart over and over"
          description: "Their containers restarted more than {{ $r.restartsIn15m }} times in 15 minutes. The job's workers[].lastError shows why (the container's last exit and the end of its log)."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamworkercrashlooping"
      - alert: OncestreamDeadLettersIncreasing
        expr: sum by (job_id) (increase(oncestream_records_dead_lettered_total[10m])) > 0
        labels:
          severity: info
        annotations:
          summary: "StreamJob {{"{{"}} $labels.job_id {{"}}"}} dead-lettered {{"{{"}} $value | humanize {{"}}"}} records in 10 minutes"
          description: "Records that could not be decoded or mapped went to the job's dead-letter table with their error."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamdeadlettersincreasing"
  - name: oncestream.operator
    rules:
      - alert: OncestreamOperatorDown
        expr: absent(oncestream_operator_reconciliations_total)
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: "The Oncestream operator is not scraped"
          description: "No operator has exported metrics for 5 minutes: it is down or not scraped. Running workers go on, but nothing reconciles, rescales or reports status."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamoperatordown"
      - alert: OncestreamReconcileErrors
        expr: sum(rate(oncestream_operator_reconcile_errors_total[5m])) > 0
        for: 10m
        labels:
          severity: warning
        annotations:
          summary: "The Oncestream operator's reconciliations fail"
          description: "Reconciliations have failed for 10 minutes (each is retried): the API server refuses its writes, or RBAC is missing. The jobs' Ready condition (reason ReconcileFailed) says why."
          runbook_url: "{{ $r.runbookUrl }}#oncestreamreconcileerrors"
{{- end -}}
