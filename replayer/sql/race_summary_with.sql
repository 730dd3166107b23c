-- model: macro(margin_s); depends: races_with, suggested_prestop_s
-- The distribution of "deletion requested → endpoint off" and the suggested preStop delay.
SELECT count(*) AS pods,
       count(*) FILTER (WHERE verdict = 'stopped_before_endpoint_off') AS stopped_before_endpoint_off,
       count(*) FILTER (WHERE verdict = 'within_margin') AS within_margin,
       count(*) FILTER (WHERE verdict = 'ok') AS ok,
       count(*) FILTER (WHERE verdict = 'unknown') AS unknown,
       quantile_cont(request_to_endpoint_off_s, 0.5) AS p50_request_to_endpoint_off_s,
       quantile_cont(request_to_endpoint_off_s, 0.9) AS p90_request_to_endpoint_off_s,
       quantile_cont(request_to_endpoint_off_s, 0.99) AS p99_request_to_endpoint_off_s,
       max(request_to_endpoint_off_s) AS max_request_to_endpoint_off_s,
       max(exposed_s) FILTER (WHERE exposed_s > 0) AS max_exposed_s,
       suggested_prestop_s(quantile_cont(request_to_endpoint_off_s, 0.99), margin_s)
           AS suggested_prestop_s
FROM races_with(margin_s)
